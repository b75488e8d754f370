"""Waiting for a positive signal: poll a check until it answers something truthy, or fail with
what it last answered (never a fixed sleep asserting that something did not happen)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def until(check: Callable[[], Any], what: str, timeout: float = 90.0, every: float = 0.5) -> Any:
    """The first truthy answer of `check`, polled every `every` seconds for `timeout`."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")
