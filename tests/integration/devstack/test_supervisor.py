"""`run` (behind `make run`) against stand-in services: ready, keyed, restarting, and clean on exit."""

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import httpx
import pytest

from engram_devstack import free_ports
from engram_devstack.envfiles import read_env_file
from engram_devstack.processes import PidFile, pid_alive
from tests.support.polling import until

pytestmark = pytest.mark.integration

FAKE_SERVICES = Path(__file__).parent / "fake_services"


def _install_fake_services(directory: Path) -> Path:
    """fake_<name>.py becomes package engram_<name>, in a temp dir that shadows nothing else."""
    for source in FAKE_SERVICES.glob("fake_*.py"):
        package = directory / f"engram_{source.stem.removeprefix('fake_')}"
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text(source.read_text())
    return directory


def _environment(root: Path, cache_dir: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KAFKA_BOOTSTRAP_SERVERS", "MONGODB_URI")
    }
    env.update(
        ENGRAM_ROOT=str(root),
        ENGRAM_CACHE_DIR=str(cache_dir),
        PYTHONPATH=os.pathsep.join(
            filter(None, [str(_install_fake_services(root / "fakes")), env.get("PYTHONPATH")])
        ),
        FAKE_GATEWAY_KEYS=str(root / "fake-keys.json"),
        FAKE_WORKER_CHILD_PIDS=str(root / "worker-children"),
    )
    return env


def _start_run(
    env: dict[str, str], ports: list[int], log: Path, *options: str
) -> subprocess.Popen[bytes]:
    kafka, controller, mongo, gateway = ports
    argv = [
        sys.executable, "-m", "engram_devstack", "run",
        "--services", "gateway,worker,crashy",
        "--kafka-port", str(kafka), "--kafka-controller-port", str(controller),
        "--mongo-port", str(mongo), "--gateway-port", str(gateway), "--ready-timeout", "60",
        *options,
    ]  # fmt: skip
    with log.open("ab") as output:
        return subprocess.Popen(argv, env=env, stdout=output, stderr=subprocess.STDOUT)


def _wait_for(path: Path, run: subprocess.Popen[bytes], log: Path, timeout: float) -> float:
    """Seconds until `path` appears while the run stays alive; a failure shows the run's log."""
    started = time.monotonic()

    def written() -> bool:
        assert run.poll() is None, log.read_text()
        return path.exists()

    try:
        until(written, f"{path.name} to be written", timeout, 0.2)
    except AssertionError as failed:
        raise AssertionError(f"{failed}\n{log.read_text()}") from None
    return time.monotonic() - started


def _pids(root: Path) -> list[int]:
    data = root / ".engram" / "data"
    files = [data / "kafka.pid", data / "ferretdb.pid", *sorted((data / "services").glob("*.pid"))]
    pids = [pid for pid in (PidFile(path).read() for path in files) if pid is not None]
    children = root / "worker-children"
    pids += [int(line) for line in children.read_text().split()] if children.exists() else []
    return pids


def _assert_kept_off_cpu_1(pids: list[int]) -> None:
    """Every thread of the broker, the database and the services avoids the model's CPU,
    and the services are told which CPU the model has."""
    alive = [pid for pid in pids if pid_alive(pid)]
    assert len(alive) >= 3
    for pid in alive:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                assert 1 not in os.sched_getaffinity(int(thread)), (pid, thread)
    worker = [pid for pid in alive if b"engram_worker" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert worker
    environ = Path(f"/proc/{worker[0]}/environ").read_bytes().split(b"\0")
    assert b"ENGRAM_EMBEDDING_MINILM_CPUS=[1]" in environ


def _stop(run: subprocess.Popen[bytes], log: Path) -> None:
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=90) == 0, log.read_text()


def test_run_is_ready_writes_a_key_restarts_the_dead_and_leaves_nothing(
    tmp_path: Path, cache_dir: Path
) -> None:
    root, log = tmp_path / "checkout", tmp_path / "run.log"
    root.mkdir()
    env = _environment(root, cache_dir)
    engram = root / ".engram"
    run = _start_run(env, free_ports(4), log)
    try:
        _wait_for(engram / "run.env", run, log, timeout=180)
        values = read_env_file(engram / "run.env")
        assert values["ENGRAM_URL"].startswith("http://127.0.0.1:")
        assert values["ENGRAM_API_KEY"] == (engram / "dev-api-key").read_text().strip()
        assert set(read_env_file(engram / "stack.env")) == {
            "KAFKA_BOOTSTRAP_SERVERS",
            "MONGODB_URI",
        }
        with urllib.request.urlopen(values["ENGRAM_URL"] + "/readyz", timeout=5) as response:
            assert response.status == 200
        ops_key = values["ENGRAM_OPS_API_KEY"]
        assert ops_key == (engram / "ops-api-key").read_text().strip() != values["ENGRAM_API_KEY"]
        assert f"ops dashboard: {values['ENGRAM_URL']}/ops" in log.read_text()
        login = values["ENGRAM_URL"] + "/ops/login"
        assert httpx.post(login, data={"api_key": ops_key}).status_code == 303, "signed in"
        assert httpx.post(login, data={"api_key": values["ENGRAM_API_KEY"]}).status_code != 303

        tenant = subprocess.run(
            [sys.executable, "-m", "engram_devstack", "tenant", "acme"],
            env=env, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert tenant.stdout.strip().startswith("ek_")
        assert tenant.stdout.count("\n") == 1

        until(
            lambda: "crashy: exited with code 3" in log.read_text(),
            "the supervisor to log the crashing service's exit",
            30,
            0.2,
        )
        pids = _pids(root)
        assert len(pids) >= 4
    finally:
        _stop(run, log)
    assert [pid for pid in pids if pid_alive(pid)] == []
    assert not (engram / "run.env").exists()

    model_cpus = ["--model-cpus", "1"] if len(os.sched_getaffinity(0)) > 1 else []
    second = _start_run(env, free_ports(4), log, *model_cpus)
    try:
        ready_after = _wait_for(engram / "run.env", second, log, timeout=60)
        again = read_env_file(engram / "run.env")
        assert again["ENGRAM_API_KEY"] == values["ENGRAM_API_KEY"]
        assert again["ENGRAM_OPS_API_KEY"] == ops_key
        assert "reusing the key" in log.read_text()
        assert ready_after < 60
        pids = _pids(root)
        if model_cpus:
            _assert_kept_off_cpu_1(pids)
    finally:
        _stop(second, log)
    assert [pid for pid in pids if pid_alive(pid)] == []


def test_run_leaves_running_the_servers_it_found_running(tmp_path: Path, cache_dir: Path) -> None:
    root, log = tmp_path / "checkout", tmp_path / "run.log"
    root.mkdir()
    env = _environment(root, cache_dir)
    kafka, controller, mongo, gateway = free_ports(4)
    infra = ["--kafka-port", str(kafka), "--kafka-controller-port", str(controller)]
    infra += ["--mongo-port", str(mongo)]
    devstack = [sys.executable, "-m", "engram_devstack"]
    subprocess.run([*devstack, "up", *infra], env=env, capture_output=True, timeout=240, check=True)
    data = root / ".engram" / "data"
    servers = [PidFile(data / name).read() for name in ("kafka.pid", "ferretdb.pid")]
    try:
        run = _start_run(env, [kafka, controller, mongo, gateway], log)
        _wait_for(root / ".engram" / "run.env", run, log, timeout=120)
        _stop(run, log)
        assert "left running" in log.read_text()
        assert all(pid is not None and pid_alive(pid) for pid in servers), log.read_text()
    finally:
        subprocess.run([*devstack, "down"], env=env, capture_output=True, timeout=120)
    assert not any(pid is not None and pid_alive(pid) for pid in servers)


def test_run_names_a_service_that_is_not_importable(tmp_path: Path, cache_dir: Path) -> None:
    env = _environment(tmp_path, cache_dir)
    result = subprocess.run(
        [sys.executable, "-m", "engram_devstack", "run", "--services", "gateway,nonexistent"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert "engram_nonexistent" in result.stderr
    assert not (tmp_path / ".engram" / "data" / "kafka.pid").exists()
