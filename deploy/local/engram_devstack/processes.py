"""Detached child processes found again by pid file, and stopped without leaving anything behind."""

import contextlib
import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

START_BANNER = "=== "
LOG_ROTATE_BYTES = 50 * 1024 * 1024


def spawn(
    argv: Sequence[str],
    log_path: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start argv in its own session (so Ctrl-C reaches only the supervisor), output to log_path."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    _rotate(log_path)
    with log_path.open("ab") as log:
        log.write(f"{START_BANNER}{time.strftime('%Y-%m-%d %H:%M:%S')} start ===\n".encode())
        log.flush()
        child = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    _wait_for_exec(child)
    return child


def _rotate(log_path: Path) -> None:
    """Logs append across runs; past a size, the old one moves aside to `<name>.log.1`."""
    try:
        if log_path.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(log_path, log_path.with_name(log_path.name + ".1"))
    except FileNotFoundError:
        return


def _wait_for_exec(child: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Popen may return before the kernel has laid out the argv that identifies the process."""
    deadline = time.monotonic() + timeout
    while not command_line(child.pid) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)


def _reap(pid: int) -> None:
    """Collect our own exited child, so it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def pid_alive(pid: int) -> bool:
    """True for a live process; a zombie counts as gone."""
    _reap(pid)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[-1].split()[0]
    return state not in ("Z", "X")


def command_line(pid: int) -> list[str]:
    """The argv of a process, or [] when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MiB, or None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _send(pid: int, sig: signal.Signals, *, to_group: bool) -> None:
    """Signal the process group our children lead, or just the process."""
    with contextlib.suppress(ProcessLookupError):
        if to_group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def kill_group(pgid: int) -> None:
    """Kill whatever is left in a process group once its leader is gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def _wait_all_gone(pids: list[int], timeout: float) -> list[int]:
    """Poll until every pid is gone or the timeout passes; returns the survivors."""
    deadline = time.monotonic() + timeout
    alive = [pid for pid in pids if pid_alive(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive


def terminate(*pids: int, timeout: float = 20.0) -> None:
    """SIGTERM all at once, wait up to timeout, SIGKILL the rest; returns once all are gone."""
    groups = {pid: _leads_group(pid) for pid in pids if pid_alive(pid)}
    for pid, to_group in groups.items():
        _send(pid, signal.SIGTERM, to_group=to_group)
    survivors = _wait_all_gone(list(groups), timeout)
    for pid in survivors:
        _send(pid, signal.SIGKILL, to_group=groups[pid])
    _wait_all_gone(survivors, 10.0)
    for pid, to_group in groups.items():
        if to_group:
            kill_group(pid)
        _reap(pid)


class PidFile:
    """A pid on one line, so `kill $(cat file)` works too."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> int | None:
        try:
            return int(self.path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def write(self, pid: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(f"{pid}\n")

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def tail(path: Path, lines: int = 20) -> str:
    """The last non-blank lines a log got since the latest start, for error messages."""
    recent: deque[str] = deque(maxlen=lines)
    try:
        with path.open("r", errors="replace") as handle:
            for line in handle:
                if line.startswith(START_BANNER):
                    recent.clear()
                elif line.strip():
                    recent.append(line.rstrip())
    except OSError:
        return f"(no log at {path})"
    return "\n".join(recent) or "(log is empty)"
