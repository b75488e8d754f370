"""A local Google Drive v3 server: the subset the connectors call, driven by tests.

The real client library talks to it over HTTP: `changes/startPageToken`, `changes` with page
tokens, `files/{id}` (metadata, or bytes with `alt=media`) and `files/{id}/export`. Tests add,
change, trash, remove and revoke files, and can make a path fail a few times.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/drive/v3/"
EXPORTS = {
    "application/vnd.google-apps.document": {"text/html", "text/plain", "application/pdf"},
    "application/vnd.google-apps.spreadsheet": {"text/csv"},
}
"""Types Drive exports each Google-native type to (a subset of what the real API offers)."""


@dataclass
class StubFile:
    """One file as Drive would hold it."""

    id: str
    name: str
    mime_type: str
    content: bytes
    modified_time: str
    version: int = 1
    trashed: bool = False
    readable: bool = True

    def metadata(self) -> dict[str, Any]:
        """`files.get` metadata; Google-native files have no checksum or size."""
        meta: dict[str, Any] = {
            "kind": "drive#file",
            "id": self.id,
            "name": self.name,
            "mimeType": self.mime_type,
            "version": str(self.version),
            "modifiedTime": self.modified_time,
            "trashed": self.trashed,
        }
        if self.mime_type not in EXPORTS:
            meta["md5Checksum"] = hashlib.md5(self.content).hexdigest()
            meta["size"] = str(len(self.content))
        return meta


@dataclass
class Fault:
    """Answer `status` to requests whose path contains `fragment`, `times` times."""

    fragment: str
    status: int
    times: int


@dataclass
class DriveStub:
    """Start with `start()` (or as a context manager); `root_url` goes into the client's settings."""

    token: str | None = "stub-token"
    files: dict[str, StubFile] = field(default_factory=dict)
    changes: list[dict[str, Any]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def root_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def start(self) -> DriveStub:
        """Listen on a free port of 127.0.0.1 in a daemon thread."""
        stub = self

        class Handler(_Handler):
            drive = stub

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self) -> DriveStub:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def add_file(
        self,
        name: str,
        content: bytes,
        *,
        mime_type: str = "text/csv",
        modified_time: str | None = None,
        file_id: str | None = None,
    ) -> str:
        """A new file, recorded as one change."""
        fid = file_id or f"f{uuid.uuid4().hex[:12]}"
        with self.lock:
            self.files[fid] = StubFile(fid, name, mime_type, content, modified_time or _now())
            self._changed(fid, removed=False)
        return fid

    def update_file(self, file_id: str, content: bytes, modified_time: str | None = None) -> None:
        """New content: a new version and checksum."""
        with self.lock:
            stub = self.files[file_id]
            stub.content = content
            stub.version += 1
            stub.modified_time = modified_time or _now()
            self._changed(file_id, removed=False)

    def trash(self, file_id: str) -> None:
        """Move to the trash (still readable, `trashed: true`)."""
        with self.lock:
            stub = self.files[file_id]
            stub.trashed = True
            stub.version += 1
            self._changed(file_id, removed=False)

    def remove(self, file_id: str) -> None:
        """Delete for good: the change says `removed` and the file answers 404."""
        with self.lock:
            del self.files[file_id]
            self._changed(file_id, removed=True)

    def revoke(self, file_id: str) -> None:
        """Our access is withdrawn: the file answers 403."""
        with self.lock:
            self.files[file_id].readable = False
            self._changed(file_id, removed=False)

    def fail(self, fragment: str, status: int = 500, times: int = 1) -> None:
        """Make the next `times` requests whose path contains `fragment` answer `status`."""
        with self.lock:
            self.faults.append(Fault(fragment, status, times))

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def start_token(self) -> str:
        """The page token for changes made from now on."""
        with self.lock:
            return str(len(self.changes) + 1)

    def _changed(self, file_id: str, *, removed: bool) -> None:
        self.changes.append(
            {
                "kind": "drive#change",
                "changeType": "file",
                "fileId": file_id,
                "removed": removed,
                "time": _now(),
            }
        )

    def answer(
        self, path: str, query: dict[str, list[str]], auth: str | None
    ) -> tuple[int, str, bytes]:
        """Route one GET: (status, content type, body)."""
        with self.lock:
            self.requests.append(path)
            if self.token is not None and auth != f"Bearer {self.token}":
                return _error(401, "authError", "invalid credentials")
            for fault in self.faults:
                if fault.fragment in path and fault.times > 0:
                    fault.times -= 1
                    return _error(fault.status, "backendError", "injected fault")
            if not path.startswith(PREFIX):
                return _error(404, "notFound", "no such endpoint")
            route = path[len(PREFIX) :].split("/")
            if route == ["changes", "startPageToken"]:
                return _json(
                    {"kind": "drive#startPageToken", "startPageToken": str(len(self.changes) + 1)}
                )
            if route == ["changes"]:
                return self._changes(query)
            if len(route) == 2 and route[0] == "files":
                return self._file(route[1], query)
            if len(route) == 3 and route[0] == "files" and route[2] == "export":
                return self._export(route[1], query)
            return _error(404, "notFound", "no such endpoint")

    def _changes(self, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        """A page from the token; `nextPageToken` when more remain, else `newStartPageToken`."""
        try:
            start = int(query["pageToken"][0])
            size = int(query.get("pageSize", ["100"])[0])
        except (KeyError, ValueError):
            return _error(400, "invalid", "pageToken is required")
        begin = max(start - 1, 0)
        page = self.changes[begin : begin + size]
        body: dict[str, Any] = {"kind": "drive#changeList", "changes": page}
        if begin + size < len(self.changes):
            body["nextPageToken"] = str(start + size)
        else:
            body["newStartPageToken"] = str(len(self.changes) + 1)
        return _json(body)

    def _visible(self, file_id: str) -> StubFile | tuple[int, str, bytes]:
        stub = self.files.get(file_id)
        if stub is None:
            return _error(404, "notFound", "file not found")
        if not stub.readable:
            return _error(403, "insufficientFilePermissions", "no access")
        return stub

    def _file(self, file_id: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        stub = self._visible(file_id)
        if not isinstance(stub, StubFile):
            return stub
        if query.get("alt") == ["media"]:
            if stub.mime_type in EXPORTS:
                return _error(403, "fileNotDownloadable", "use export")
            return 200, "application/octet-stream", stub.content
        return _json(stub.metadata())

    def _export(self, file_id: str, query: dict[str, list[str]]) -> tuple[int, str, bytes]:
        stub = self._visible(file_id)
        if not isinstance(stub, StubFile):
            return stub
        wanted = query.get("mimeType", [""])[0]
        if wanted not in EXPORTS.get(stub.mime_type, set()):
            return _error(400, "badRequest", "unsupported export type")
        return 200, wanted, stub.content


class _Handler(BaseHTTPRequestHandler):
    drive: DriveStub

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        status, ctype, body = self.drive.answer(
            parts.path, parse_qs(parts.query), self.headers.get("Authorization")
        )
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `requests` instead."""


def _json(body: dict[str, Any]) -> tuple[int, str, bytes]:
    return 200, "application/json; charset=UTF-8", json.dumps(body).encode()


def _error(status: int, reason: str, message: str) -> tuple[int, str, bytes]:
    body = {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"reason": reason, "message": message}],
        }
    }
    return status, "application/json; charset=UTF-8", json.dumps(body).encode()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
