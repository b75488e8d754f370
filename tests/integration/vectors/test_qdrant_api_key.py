"""QDRANT_API_KEY reaches a Qdrant server in the `api-key` header of every request the
server store sends, and the embedded engine is built without it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import SecretStr

from engram_vectors import vector_store_from
from engram_vectors.errors import CollectionNotFound

pytestmark = pytest.mark.integration


class Recording(BaseHTTPRequestHandler):
    """Answers Qdrant's "does the collection exist" with no, keeping each request's key."""

    keys: list[str | None] = []

    def do_GET(self) -> None:
        Recording.keys.append(self.headers.get("api-key"))
        body = json.dumps({"result": {"exists": False}, "status": "ok", "time": 0}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        """Quiet: the test reads the recorded keys."""


@pytest.fixture
def server() -> Iterator[str]:
    Recording.keys = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
async def test_the_key_goes_with_every_request(server: str, tmp_path: Path) -> None:
    store = vector_store_from(server, str(tmp_path), api_key=SecretStr("qk-2f8d"))
    with pytest.raises(CollectionNotFound):
        await store.collection_info("memories")
    assert Recording.keys and set(Recording.keys) == {"qk-2f8d"}


async def test_no_key_sends_no_header(server: str, tmp_path: Path) -> None:
    store = vector_store_from(server, str(tmp_path))
    with pytest.raises(CollectionNotFound):
        await store.collection_info("memories")
    assert Recording.keys == [None]
