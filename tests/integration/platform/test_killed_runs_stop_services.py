"""A bench or test run stopped with SIGTERM (`kill`, `timeout`) stops the service processes it
started, instead of leaving them running on their ports and consuming their topics."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STARTS_ONE = """
import sys, time
from pathlib import Path
from engram_devstack import free_port
from tests.support.services import ServiceProcess
service = ServiceProcess("embedding", {"ENGRAM_EMBEDDING_EMBEDDER": "hashing"}, free_port(),
                         Path(sys.argv[1]))
service.start()
print(service.proc.pid, flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_run_killed_with_sigterm_stops_the_services_it_started(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    run = subprocess.Popen(
        [sys.executable, "-c", STARTS_ONE, str(tmp_path / "logs")],
        cwd=ROOT,
        env={**os.environ, **stack_env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    service_pid = 0
    try:
        assert run.stdout is not None
        service_pid = int(run.stdout.readline())
        assert alive(service_pid)
        run.send_signal(signal.SIGTERM)
        assert run.wait(60) != 0, "the run ends, interrupted, instead of going on"
        deadline = time.monotonic() + 30
        while alive(service_pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(service_pid), "the service outlived the run that started it"
    finally:
        if run.poll() is None:
            run.kill()
        if service_pid and alive(service_pid):
            os.killpg(service_pid, signal.SIGKILL)
