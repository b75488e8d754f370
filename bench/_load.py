"""A lean load generator: JSON POSTs over a few kept-alive connections.

The benches run on the same 2 cores as the platform they measure. httpx's client spent ~90 % of a
core posting 50 memories/s here (its pool re-checks every connection per request), CPU taken from
the services under test; the platform's lean client (the gateway's own for its hop to the
memory service) does the same posts for a small fraction of that.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engram_platform.lean_http import LeanJsonClient

TIMEOUT_SECONDS = 300.0
"""A bulk load's request may wait long behind others; a bench reports it, never gives up early."""


class LeanClient:
    """POSTs JSON to one server over at most `connections` kept-alive connections."""

    def __init__(self, base_url: str, headers: dict[str, str], connections: int = 8) -> None:
        self._client = LeanJsonClient(base_url, timeout=TIMEOUT_SECONDS)
        self._headers = headers
        self._slots = asyncio.Semaphore(connections)

    async def __aenter__(self) -> LeanClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._client.close()

    async def post_json(self, path: str, body: Any) -> tuple[int, Any]:
        """POST `body` as JSON; the status and the decoded JSON answer."""
        async with self._slots:
            status, raw = await self._client.post(path, json.dumps(body).encode(), self._headers)
        return status, json.loads(raw) if raw else None
