"""Cache entries under `.engram/cache/`, built at most once even when two processes race."""

import fcntl
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from engram_devstack.errors import InstallError
from engram_devstack.processes import tail


@contextmanager
def exclusive(entry: Path) -> Iterator[None]:
    """Hold a lock beside a cache entry while it is checked and filled."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    with (entry.parent / f".{entry.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def require_tool(tool: str, purpose: str) -> str:
    """The path of a command-line tool, or an InstallError that says what it was for."""
    found = shutil.which(tool)
    if found is None:
        raise InstallError(f"`{tool}` is not on PATH; it is needed to {purpose}")
    return found


def run_logged(argv: Sequence[str], log_path: Path, *, cwd: Path, what: str) -> None:
    """Run a fetch/build step with its output in a log, raising with the log's tail on failure."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        result = subprocess.run(
            list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
    if result.returncode != 0:
        raise InstallError(
            f"{what} failed (exit {result.returncode}); last lines of {log_path}:\n{tail(log_path)}"
        )
