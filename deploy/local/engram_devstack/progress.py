"""One progress line per step on stderr, so stdout stays clean for values callers capture."""

import sys
import time

PREFIX = "[engram]"


def say(message: str) -> None:
    """Print one progress line."""
    print(f"{PREFIX} {message}", file=sys.stderr, flush=True)


def shout(message: str) -> None:
    """A line that must not be missed, such as a weaker fallback being in use."""
    bar = "!" * 78
    print(f"{PREFIX} {bar}\n{PREFIX} {message}\n{PREFIX} {bar}", file=sys.stderr, flush=True)


class Stopwatch:
    """Elapsed seconds since creation, formatted for progress lines."""

    def __init__(self) -> None:
        self._start = time.monotonic()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self._start

    def __str__(self) -> str:
        return f"({self.seconds:.1f}s)"
