"""A hand-written HTTP stub on 127.0.0.1: scripted replies per route, every request recorded."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    """One scripted answer; `drop` closes the connection without answering."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    drop: bool = False


@dataclass
class Seen:
    """A request as the stub received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def problem(status: int, kind: str, detail: str = "", **extra: Any) -> Reply:
    """A problem+json reply shaped like the gateway's."""
    body = {
        "type": f"/problems/{kind}",
        "title": kind.replace("-", " ").capitalize(),
        "status": status,
        "detail": detail,
        "instance": "/stub",
        **extra,
    }
    return Reply(status, body, content_type="application/problem+json")


class StubServer:
    """Routes map (METHOD, path) to a queue of replies; the last reply repeats."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], list[Reply]] = {}
        self.requests: list[Seen] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.stub = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def on(self, method: str, path: str, *replies: Reply) -> None:
        """Script the answers for a route, in order."""
        self.routes[(method, path)] = list(replies)

    def seen(self, method: str, path: str) -> list[Seen]:
        """Requests received on a route."""
        return [r for r in self.requests if r.method == method and r.path == path]

    def next_reply(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            queue = self.routes.get((seen.method, seen.path))
            if not queue:
                return problem(404, "not-found", "no stub route")
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read `requests` instead."""

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        seen = Seen(
            self.command,
            parts.path,
            parse_qs(parts.query),
            {k.lower(): v for k, v in self.headers.items()},
            body,
        )
        reply = self.server.stub.next_reply(seen)  # type: ignore[attr-defined]
        if reply.drop:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if isinstance(reply.body, bytes):
            payload = reply.body
        elif reply.body is None:
            payload = b""
        else:
            payload = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        if payload:
            self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _serve
    do_POST = _serve
    do_DELETE = _serve
    do_PATCH = _serve
    do_PUT = _serve


@contextmanager
def running_stub() -> Iterator[StubServer]:
    """A started stub, stopped afterwards."""
    stub = StubServer()
    stub.start()
    try:
        yield stub
    finally:
        stub.stop()
