"""What every local server shares: install once, start detached, find again by pid file, stop."""

import os
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engram_devstack import processes
from engram_devstack.errors import PortInUseError, StartError
from engram_devstack.paths import Layout
from engram_devstack.ports import LOCALHOST, port_open


@dataclass(frozen=True)
class InstallResult:
    """What ensure_installed did, for a progress line."""

    changed: bool
    summary: str


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot for `status` and for the report."""

    name: str
    running: bool
    pid: int | None
    address: str | None
    rss_mb: float | None

    def describe(self) -> str:
        if not self.running:
            return f"{self.name}: stopped"
        memory = f", rss {self.rss_mb:.0f} MB" if self.rss_mb is not None else ""
        return f"{self.name}: running at {self.address} (pid {self.pid}{memory})"


class ManagedServer(ABC):
    """A local server the dev stack owns; every method is safe to call twice."""

    name: str = "server"

    def __init__(
        self,
        state_dir: Path,
        port: int,
        *,
        host: str = LOCALHOST,
        cache_dir: Path | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.state_dir = Path(state_dir).resolve()
        self.host = host
        self.port = port
        self.cache_dir = Path(cache_dir or Layout.discover().cache_dir).resolve()
        self.log_dir = Path(log_dir or self.state_dir / "logs").resolve()
        self._pid_file = processes.PidFile(self.state_dir / f"{self.name}.pid")
        self._address_file = self.state_dir / f"{self.name}.address"

    @property
    def address(self) -> str:
        """host:port clients connect to."""
        return f"{self.host}:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    @property
    def pid_file(self) -> Path:
        return self._pid_file.path

    @abstractmethod
    def ensure_installed(self) -> InstallResult:
        """Fetch or build once per version; a second call does nothing."""

    @abstractmethod
    def _command(self) -> list[str]:
        """The argv that runs the server."""

    @abstractmethod
    def _marker(self) -> str:
        """A string unique to this instance's argv, so a recycled pid is never mistaken for ours."""

    @abstractmethod
    def _probe(self) -> None:
        """Raise unless the server answers a real protocol request."""

    @abstractmethod
    def _prepare(self) -> None:
        """Write config and initialise storage before the process starts."""

    def _environment(self) -> Mapping[str, str] | None:
        return None

    def running_pid(self) -> int | None:
        """The pid from our pid file if that process is alive and is this instance."""
        pid = self._pid_file.read()
        if pid is None or not processes.pid_alive(pid):
            return None
        if self._marker() not in " ".join(processes.command_line(pid)):
            return None
        return pid

    def recorded_address(self) -> str | None:
        """Where the running instance listens (it may differ from this object's port)."""
        try:
            return self._address_file.read_text().strip() or None
        except OSError:
            return None

    def start(self) -> bool:
        """Start in the background; False when an instance of ours already serves this address."""
        pid = self.running_pid()
        if pid is not None:
            if self.recorded_address() == self.address and port_open(self.host, self.port):
                return False
            self.stop()
        if port_open(self.host, self.port):
            raise PortInUseError(
                f"{self.name}: port {self.port} on {self.host} is already in use by another "
                "process; choose another port or stop that process"
            )
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._prepare()
        child = processes.spawn(
            self._command(), self.log_file, env=self._environment(), cwd=self.state_dir
        )
        self._pid_file.write(child.pid)
        self._address_file.write_text(f"{self.address}\n")
        return True

    def wait_ready(self, timeout: float = 60.0) -> float:
        """Block until a real request succeeds; returns seconds waited, raises with the log tail."""
        started = time.monotonic()
        last_error = "no attempt made"
        while True:
            pid = self.running_pid()
            if pid is None:
                raise StartError(
                    f"{self.name}: process exited before it was ready; last lines of "
                    f"{self.log_file}:\n{processes.tail(self.log_file)}"
                )
            try:
                self._probe()
                return time.monotonic() - started
            except Exception as error:
                last_error = f"{type(error).__name__}: {error}"
            if time.monotonic() - started > timeout:
                raise StartError(
                    f"{self.name}: not ready after {timeout:.0f}s at {self.address} "
                    f"({last_error}); last lines of {self.log_file}:\n"
                    f"{processes.tail(self.log_file)}"
                )
            time.sleep(0.25)

    def stop(self, timeout: float = 30.0) -> bool:
        """SIGTERM, wait, then SIGKILL; True when there was something to stop."""
        pid = self.running_pid()
        if pid is not None:
            processes.terminate(pid, timeout=timeout)
        self._pid_file.remove()
        self._address_file.unlink(missing_ok=True)
        return pid is not None

    def status(self) -> ServerStatus:
        pid = self.running_pid()
        return ServerStatus(
            name=self.name,
            running=pid is not None,
            pid=pid,
            address=self.recorded_address() if pid is not None else None,
            rss_mb=processes.rss_mb(pid) if pid is not None else None,
        )


def executable_exists(path: Path) -> bool:
    """A built binary is reusable only if it is a non-empty executable file."""
    return path.is_file() and path.stat().st_size > 0 and os.access(path, os.X_OK)
