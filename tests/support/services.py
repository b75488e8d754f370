"""Run Engram services as real processes, the way `make run` does, for integration tests."""

from __future__ import annotations

import atexit
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from engram_devstack import free_port
from engram_embedders.model_dir import MODEL_DIR_ENV
from tests.support.internal import INTERNAL_TOKEN
from tests.support.models import model_dir
from tests.support.vector_collections import with_collection_per_path

_RUNNING: dict[int, ServiceProcess] = {}
"""Every service process this one started and has not stopped, stopped again at exit."""


def _stop_running() -> None:
    for service in list(_RUNNING.values()):
        service.stop()


def _interrupt_on_sigterm(_signum: int, _frame: object) -> None:
    """As Ctrl-C: pytest stops the session and tears its fixtures down (a SystemExit would only
    fail the test running and go on), and a bench's `finally` blocks run."""
    raise KeyboardInterrupt


@functools.cache
def _stop_them_when_stopped() -> None:
    """Once per process: at exit, and on a SIGTERM (a bench or test run killed with `kill` or
    `timeout`), stop what is still running instead of leaving it orphaned on its ports."""
    atexit.register(_stop_running)
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt_on_sigterm)


@dataclass
class ServiceProcess:
    """One `python -m engram_<name>` process with its own log file and the tests' internal token
    (unless its env names another)."""

    name: str
    env: dict[str, str]
    port: int
    log_dir: Path
    proc: subprocess.Popen[bytes] | None = None
    starts: int = field(default=0)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    def start(self, extra_env: dict[str, str] | None = None, wait: bool = True) -> ServiceProcess:
        """Spawn the service and (by default) wait until /readyz is 200."""
        token = {"ENGRAM_INTERNAL_TOKEN": INTERNAL_TOKEN}
        models = {MODEL_DIR_ENV: str(model_dir().resolve())}
        env = with_collection_per_path(
            {**models, **os.environ, **token, **self.env, **(extra_env or {})}
        )
        env[f"ENGRAM_{self.name.upper()}_PORT"] = str(self.port)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        _stop_them_when_stopped()
        _RUNNING[id(self)] = self
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"engram_{self.name}"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.starts += 1
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Poll /readyz; fail with the log tail when the process dies, never gets ready, or
        another service answers on its port."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode}:\n{self.tail()}"
                )
            try:
                answer = httpx.get(f"{self.url}/readyz", timeout=1.0)
            except httpx.HTTPError:
                answer = None
            if answer is not None and answer.status_code == 200:
                if (named := answer.json().get("service")) != self.name:
                    raise RuntimeError(
                        f"{self.url} answers as {named!r}, not {self.name!r}:\n{self.tail()}"
                    )
                return
            time.sleep(0.2)
        raise TimeoutError(f"{self.name} not ready after {timeout}s:\n{self.tail()}")

    def kill9(self) -> None:
        """SIGKILL: no shutdown hooks, no flushing — the crash the guarantees are about."""
        _RUNNING.pop(id(self), None)
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers."""
        _RUNNING.pop(id(self), None)
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill9()

    def tail(self, lines: int = 40) -> str:
        """The end of the service's log, for failure messages."""
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def logs(self) -> str:
        """Everything the service logged (tests grep it for canaries)."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_together(*procs: ServiceProcess, timeout: float = 60.0) -> None:
    """Spawn every process before waiting on any, so their start-ups overlap (a three-service
    stack is ready in about half the time); on a failure, stop them all and raise."""
    try:
        for proc in procs:
            proc.start(wait=False)
        for proc in procs:
            proc.wait_ready(timeout)
    except Exception:
        for proc in procs:
            proc.stop()
        raise


@dataclass
class Services:
    """Starts services on one environment (`services("ingest", **extra)`), each on a free port,
    and stops every one it started."""

    env: dict[str, str]
    log_dir: Path
    started: list[ServiceProcess] = field(default_factory=list)

    def __call__(self, name: str, *, start: bool = True, **extra: str) -> ServiceProcess:
        proc = ServiceProcess(name, {**self.env, **extra}, free_port(), self.log_dir)
        self.started.append(proc)
        return proc.start() if start else proc

    def stop_all(self) -> None:
        for proc in self.started:
            proc.stop()
