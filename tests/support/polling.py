"""Waiting for a positive signal: poll a check until it answers something ready, or fail with
what it last answered (never a fixed sleep asserting that something did not happen)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any


def until(
    check: Callable[[], Any],
    what: str,
    timeout: float = 90.0,
    every: float = 0.5,
    *,
    ready: Callable[[Any], object] = bool,
) -> Any:
    """The first answer of `check` that is `ready` (truthy by default), polled every `every`
    seconds for `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if ready(last):
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout:g}s waiting for {what}; last: {_brief(last)}"
            )
        time.sleep(every)


async def until_async(
    check: Callable[[], Any],
    what: str,
    timeout: float = 90.0,
    every: float = 0.5,
    *,
    ready: Callable[[Any], object] = bool,
) -> Any:
    """`until` for a test's event loop: `check` may be a coroutine function or a plain one, and
    the loop keeps running (asyncio.sleep) between polls."""
    deadline = time.monotonic() + timeout
    while True:
        last = check()
        if inspect.isawaitable(last):
            last = await last
        if ready(last):
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout:g}s waiting for {what}; last: {_brief(last)}"
            )
        await asyncio.sleep(every)


def _brief(last: object) -> str:
    """The last answer for a failure message, cut short when it is a large listing."""
    text = repr(last)
    return text if len(text) <= 2000 else f"{text[:2000]}... ({len(text)} characters)"
