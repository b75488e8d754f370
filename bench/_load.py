"""A lean HTTP/1.1 load generator: JSON POSTs over a few kept-alive connections.

The benches run on the same 2 cores as the platform they measure. httpx's client spent ~90 % of a
core posting 50 memories/s here (its pool re-checks every connection per request), CPU taken from
the services under test; this client does the same posts for a small fraction of that.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit


class HttpError(RuntimeError):
    """The server closed the connection or answered something this client cannot read."""


class _Connection:
    """One kept-alive connection; a request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def exchange(self, request: bytes) -> tuple[int, bytes, bool]:
        """Send one request; the status, body and whether the server keeps the connection."""
        self.writer.write(request)
        status_line = await self.reader.readline()
        if not status_line:
            raise HttpError("connection closed before a response")
        status = int(status_line.split(b" ", 2)[1])
        length: int | None = None
        keep = True
        while (line := await self.reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                keep = False
            elif name == b"transfer-encoding":
                raise HttpError("chunked responses are not supported by this load generator")
        if length is None:
            raise HttpError("response without Content-Length")
        return status, await self.reader.readexactly(length), keep

    def close(self) -> None:
        self.writer.close()


class LeanClient:
    """POSTs JSON to one server over at most `connections` kept-alive connections."""

    def __init__(self, base_url: str, headers: dict[str, str], connections: int = 8) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        fixed = {"Host": f"{self.host}:{self.port}", **headers}
        self._head = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._slots: asyncio.Queue[_Connection | None] = asyncio.Queue()
        for _ in range(connections):
            self._slots.put_nowait(None)
        self._open: set[_Connection] = set()

    async def __aenter__(self) -> LeanClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        for connection in self._open:
            connection.close()
        self._open.clear()

    async def post_json(self, path: str, body: Any) -> tuple[int, Any]:
        """POST `body` as JSON; the status and the decoded JSON answer."""
        payload = json.dumps(body).encode()
        request = (
            f"POST {path} HTTP/1.1\r\n{self._head}Content-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n"
        ).encode() + payload
        connection = await self._slots.get()
        try:
            if connection is None:
                connection = _Connection(*await asyncio.open_connection(self.host, self.port))
                self._open.add(connection)
            status, raw, keep = await connection.exchange(request)
        except BaseException:
            if connection is not None:
                connection.close()
                self._open.discard(connection)
            self._slots.put_nowait(None)
            raise
        if not keep:
            connection.close()
            self._open.discard(connection)
            connection = None
        self._slots.put_nowait(connection)
        return status, json.loads(raw) if raw else None
