"""A cap on request bodies, enforced while they arrive, so no route buffers an unbounded body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from engram_platform.problems import problem_response


class BodyLimit:
    """ASGI middleware: 413 problem+json for a declared or streamed body above the path's cap.

    A declared Content-Length is refused before the route runs; a chunked body is counted as it
    is read and refused at the first byte over (an HTTPException the problem handler shapes).
    """

    def __init__(self, app: ASGIApp, *, default: int, by_path: Mapping[str, int]) -> None:
        self.app = app
        self.default = default
        self.by_path = dict(by_path)

    def cap(self, path: str) -> int:
        """The most bytes a request to `path` may carry."""
        return self.by_path.get(path.rstrip("/") or "/", self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.cap(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            await _too_large(cap, scope["path"])(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise HTTPException(413, detail=_detail(cap))
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    """The declared body size, or None when absent or not a number."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


def _detail(cap: int) -> str:
    return f"request bodies here are limited to {cap} bytes"


def _too_large(cap: int, path: str) -> Any:
    return problem_response(413, "payload-too-large", "Payload too large", _detail(cap), path)
