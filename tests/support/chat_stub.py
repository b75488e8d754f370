"""A local OpenAI-compatible chat-completions server: canned answers, every call recorded."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Call:
    """One request as the stub received it."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ChatStub:
    """`POST /v1/chat/completions` answers `reply` as `model`, or `status` with an error body."""

    reply: str = "A short generated summary."
    model: str = "stub-chat-1"
    status: int = 200
    calls: list[Call] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        """The base URL a client appends `/chat/completions` to."""
        assert self._server is not None, "start the stub first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, bytes]:
        """Record the call, then the canned completion (or the configured failure)."""
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = None
        with self._lock:
            self.calls.append(Call(path, headers, body))
            status, reply, model = self.status, self.reply, self.model
        if path != "/v1/chat/completions":
            return 404, b'{"error": {"message": "not found"}}'
        if status != 200:
            return status, b'{"error": {"message": "stub failure"}}'
        completion = {
            "id": f"chatcmpl-stub-{len(self.calls)}",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
        }
        return 200, json.dumps(completion).encode()

    def start(self) -> ChatStub:
        """Listen on a free local port in a daemon thread."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                """Answer from the stub's script."""
                length = int(self.headers.get("content-length") or 0)
                status, payload = stub.answer(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                )
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: test output stays readable."""
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ChatStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
