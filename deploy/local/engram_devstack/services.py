"""Engram's service processes: `python -m engram_<name>`, each in its own process group."""

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from engram_devstack import processes
from engram_devstack.errors import DevstackError
from engram_devstack.progress import say

SERVICE_NAMES = (
    "gateway",
    "ingest",
    "extraction",
    "embedding",
    "memory",
    "enrichment",
    "connectors",
    "mcp",
)
BACKOFF_FIRST = 1.0
BACKOFF_LIMIT = 30.0
STABLE_AFTER = 60.0


def module_for(name: str) -> str:
    return f"engram_{name}"


def require_importable(names: Iterable[str]) -> None:
    """Fail before starting anything if a service package or its __main__ is missing."""
    missing = []
    for name in names:
        spec = importlib.util.find_spec(module_for(name))
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not any((Path(location) / "__main__.py").is_file() for location in locations):
            missing.append(module_for(name))
    if missing:
        raise DevstackError(
            f"not importable with {sys.executable} (or without a __main__.py): "
            f"{', '.join(missing)}; install each with `pip install -e services/<name>`"
        )


class ServiceProcess:
    """One service, restarted with exponential backoff when it dies."""

    def __init__(self, name: str, env: Mapping[str, str], log_dir: Path, pid_dir: Path, cwd: Path):
        self.name = name
        self.env = dict(env)
        self.log_path = log_dir / f"{name}.log"
        self.pid_file = processes.PidFile(pid_dir / f"{name}.pid")
        self.cwd = cwd
        self.child: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.failures = 0
        self.restart_at: float | None = None

    @property
    def argv(self) -> list[str]:
        return [sys.executable, "-m", module_for(self.name)]

    def start(self) -> None:
        self.child = processes.spawn(self.argv, self.log_path, env=self.env, cwd=self.cwd)
        self.pid_file.write(self.child.pid)
        self.started_at = time.monotonic()
        self.restart_at = None

    def supervise(self) -> None:
        """Notice an exit and schedule a restart; start again when the backoff has passed."""
        now = time.monotonic()
        if self.child is not None and self.child.poll() is not None:
            self._on_exit(self.child, now)
        elif self.child is None and self.restart_at is not None and now >= self.restart_at:
            say(f"{self.name}: restarting")
            self.start()

    def _on_exit(self, child: subprocess.Popen[bytes], now: float) -> None:
        lived = now - self.started_at
        self.failures = 1 if lived > STABLE_AFTER else self.failures + 1
        delay = min(BACKOFF_LIMIT, BACKOFF_FIRST * 2 ** (self.failures - 1))
        processes.kill_group(child.pid)
        self.child = None
        self.pid_file.remove()
        self.restart_at = now + delay
        code = child.returncode
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        say(
            f"{self.name}: {how} after {lived:.1f}s; "
            f"restarting in {delay:.0f}s; last lines of {self.log_path}:"
        )
        for line in processes.tail(self.log_path, 5).splitlines():
            say(f"  | {line}")

    @property
    def pid(self) -> int | None:
        return self.child.pid if self.child is not None else None

    def forget(self) -> None:
        """After the process is stopped: no restart, no pid file."""
        if self.child is not None:
            self.child.poll()
        self.child = None
        self.restart_at = None
        self.pid_file.remove()


def stop_all(services: Iterable[ServiceProcess], timeout: float = 15.0) -> None:
    """SIGTERM every service group at once, then SIGKILL whatever outlives the timeout."""
    services = list(services)
    pids = [service.pid for service in services if service.pid is not None]
    processes.terminate(*pids, timeout=timeout)
    for service in services:
        service.forget()


def stop_leftovers(names: Iterable[str], pid_dir: Path) -> None:
    """Services an earlier supervisor left behind (it was killed) would hold ports and topics."""
    for name in names:
        pid_file = processes.PidFile(pid_dir / f"{name}.pid")
        pid = pid_file.read()
        if pid is not None and module_for(name) in processes.command_line(pid):
            processes.terminate(pid, timeout=10.0)
            say(f"{name}: stopped a leftover process from an earlier run (pid {pid})")
        pid_file.remove()


def running(names: Iterable[str], pid_dir: Path) -> list[tuple[str, int]]:
    """Services with a live process recorded in pid_dir, for `status`."""
    found = []
    for name in names:
        pid = processes.PidFile(pid_dir / f"{name}.pid").read()
        if pid is not None and module_for(name) in processes.command_line(pid):
            found.append((name, pid))
    return found
