"""The one answer a route gives when the broker cannot take what it must queue."""

from __future__ import annotations

from collections.abc import Awaitable

from engram_platform.problems import Problem


async def publish_or_503(publishing: Awaitable[None], detail: str) -> None:
    """Await a publish; a broker failure is a 503 the client may retry, never a 500 or a 202."""
    try:
        await publishing
    except Exception:
        raise Problem(503, "broker-unavailable", detail) from None
