"""SIGINT/SIGTERM routing for the foreground supervisor, with short sections that defer them."""

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


class ShutdownRequested(BaseException):
    """Raised by the stop handler; a BaseException so no `except Exception` swallows it."""


class _Deferral:
    depth = 0
    pending: int | None = None


def raise_shutdown(signum: int, frame: FrameType | None) -> None:
    """The supervisor's handler: stop now, or as soon as the current deferred section ends."""
    if _Deferral.depth:
        _Deferral.pending = signum
        return
    raise ShutdownRequested


def route_stop_signals(handler: Handler) -> dict[int, Handler]:
    """Send SIGINT and SIGTERM to handler; returns the previous handlers for restore()."""
    return {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}


def restore(previous: dict[int, Handler]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold a stop request while a child is spawned and recorded, so none escapes unrecorded.

    Done in Python rather than with a blocked signal mask, which children would inherit.
    """
    _Deferral.depth += 1
    try:
        yield
    finally:
        _Deferral.depth -= 1
        if _Deferral.depth == 0 and _Deferral.pending is not None:
            _Deferral.pending = None
            raise ShutdownRequested
