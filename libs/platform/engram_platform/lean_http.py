"""JSON POSTs to one owning service over kept-alive HTTP/1.1 connections, on asyncio streams.

A recall's hop from the gateway to the memory service spent more in httpx (its request and
response models, the anyio streams, the pool re-checking each connection) than the memory
service spent answering; this client writes one request and reads one Content-Length or chunked
answer, and nothing else.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

MAX_IDLE = 32
"""Idle connections kept per service; more concurrent calls open more and close the excess."""
MAX_HEADER_LINES = 100


class LeanHttpError(Exception):
    """The service closed the connection or answered something this client cannot read."""


class _Connection:
    """One kept-alive connection, one request at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def exchange(self, request: bytes) -> tuple[int, bytes, bool]:
        """Send one request; the status, the body and whether the server keeps the connection."""
        self.writer.write(request)
        status_line = await self.reader.readline()
        if not status_line:
            raise LeanHttpError("connection closed before a response")
        try:
            status = int(status_line.split(b" ", 2)[1])
        except (IndexError, ValueError):
            raise LeanHttpError("not an HTTP status line") from None
        length: int | None = None
        chunked = False
        keep = True
        for _ in range(MAX_HEADER_LINES):
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                keep = value.strip().lower() != b"close"
        else:
            raise LeanHttpError("too many header lines")
        if chunked:
            return status, await self._chunks(), keep
        if length is None:
            raise LeanHttpError("an answer without Content-Length")
        return status, await self.reader.readexactly(length), keep

    async def _chunks(self) -> bytes:
        """A chunked body, trailers skipped."""
        parts: list[bytes] = []
        while True:
            size = int((await self.reader.readline()).split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (await self.reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)

    def close(self) -> None:
        self.writer.close()


class LeanJsonClient:
    """POSTs JSON bytes to one base URL; a call on a reused connection the server has since
    closed is sent again once on a new one (the gateway sends only reads through it; the
    benches' writes would repeat only where the server dropped a connection unanswered)."""

    def __init__(self, base_url: str, *, timeout: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("the lean client speaks plain http to a host")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self._idle: list[_Connection] = []

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """The status and body of one POST; LeanHttpError, OSError or TimeoutError when the
        service cannot be reached or read in time."""
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = (
            f"POST {self.prefix}{path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{head}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1") + body
        async with asyncio.timeout(self.timeout):
            while self._idle:
                connection = self._idle.pop()
                try:
                    return await self._send(connection, request)
                except (LeanHttpError, OSError, asyncio.IncompleteReadError):
                    continue
            connection = _Connection(*await asyncio.open_connection(self.host, self.port))
            try:
                return await self._send(connection, request)
            except asyncio.IncompleteReadError as cut:
                raise LeanHttpError("the answer was cut short") from cut

    async def _send(self, connection: _Connection, request: bytes) -> tuple[int, bytes]:
        """One exchange; the connection goes back to the idle list when both sides keep it."""
        try:
            status, body, keep = await connection.exchange(request)
        except BaseException:
            connection.close()
            raise
        if keep and len(self._idle) < MAX_IDLE:
            self._idle.append(connection)
        else:
            connection.close()
        return status, body

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
