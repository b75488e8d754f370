"""A local OpenAI-compatible chat-completions server for tests: canned replies, recorded calls.

`POST /v1/chat/completions` answers with the first rule whose fragment occurs in the user
message (else the default reply), reporting its own model id, so tests can tell the model the
endpoint names from the one configured. Tests can make the endpoint fail with a status a few
times, or stall past the client's timeout.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATH = "/v1/chat/completions"
STUB_MODEL = "stub-llm-2026-01-15"


@dataclass
class Canned:
    """One reply: the assistant's output text and how the completion ended."""

    content: str | None
    model: str = STUB_MODEL
    finish_reason: str = "stop"
    refusal: str | None = None
    stall_seconds: float = 0.0
    """How long the stub waits before this reply (set it to 0 to release later calls)."""


@dataclass
class Call:
    """One request as the stub saw it."""

    body: dict[str, Any]
    authorization: str | None

    @property
    def user_text(self) -> str:
        return "".join(
            m.get("content") or "" for m in self.body.get("messages", []) if m.get("role") == "user"
        )


@dataclass
class LlmStub:
    """The server's state; `url` is the base URL the service is configured with."""

    default: Canned = field(default_factory=lambda: Canned(json.dumps({"records": []})))
    rules: list[tuple[str, Canned]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    stalled: list[Call] = field(default_factory=list)
    failures: list[int] = field(default_factory=list)
    stall_seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, fragment: str, records: list[dict[str, Any]] | None = None, **kw: Any) -> None:
        """Reply `{"records": records}` (or `content=` verbatim) when the text has `fragment`."""
        content = kw.pop("content", None)
        if records is not None:
            content = json.dumps({"records": records})
        with self.lock:
            self.rules.append((fragment, Canned(content, **kw)))

    def rule(self, fragment: str) -> Canned:
        """The reply of the first rule for `fragment` (to change its stall, say)."""
        with self.lock:
            return next(c for f, c in self.rules if f == fragment)

    def fail(self, status: int, times: int = 1) -> None:
        """Answer the next `times` calls with `status`."""
        with self.lock:
            self.failures.extend([status] * times)

    def reply_for(self, call: Call) -> tuple[int, dict[str, Any]]:
        """The status and body for one call; records it first."""
        with self.lock:
            self.calls.append(call)
            if self.failures:
                status = self.failures.pop(0)
                return status, {"error": {"message": "stub failure", "code": status}}
            canned = next((c for frag, c in self.rules if frag in call.user_text), self.default)
        message: dict[str, Any] = {"role": "assistant", "content": canned.content}
        if canned.refusal is not None:
            message["refusal"] = canned.refusal
        return 200, {
            "id": f"chatcmpl-{len(self.calls)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": canned.model,
            "choices": [{"index": 0, "message": message, "finish_reason": canned.finish_reason}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def start(self) -> LlmStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path != PATH:
                    self._send(404, {"error": {"message": "not found"}})
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON"}})
                    return
                if stub.stall_seconds:
                    time.sleep(stub.stall_seconds)
                call = Call(body, self.headers.get("Authorization"))
                with stub.lock:
                    canned = next((c for f, c in stub.rules if f in call.user_text), None)
                if canned is not None and canned.stall_seconds:
                    stub.stalled.append(call)
                    until = time.monotonic() + canned.stall_seconds
                    while canned.stall_seconds and time.monotonic() < until:
                        time.sleep(0.05)
                status, answer = stub.reply_for(call)
                self._send(status, answer)

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
