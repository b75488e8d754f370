"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1 (no mocks)."""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from engram_embedders import (
    EmbeddingServiceError,
    InvalidEmbeddingInput,
    OpenAICompatibleEmbedder,
    ProvenanceChanged,
    ProvenanceUnavailable,
    make_embedder,
)

pytestmark = pytest.mark.unit

DIM = 6


@dataclass
class Reply:
    """A scripted answer; `status` 200 with no body means 'embed the input'."""

    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    model: str = "stub-embed-v2"
    dimension: int = DIM


def fake_vector(text: str, dimension: int) -> list[float]:
    """A deterministic, unnormalised vector for a text."""
    seed = sum(text.encode())
    return [float((seed * (i + 3)) % 17 + 1) for i in range(dimension)]


class StubEmbeddingServer:
    """A threaded HTTP server answering POST /v1/embeddings from a script, recording requests."""

    def __init__(self) -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                stub.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                reply = stub.script.popleft() if stub.script else Reply()
                payload = reply.body
                if payload is None and reply.status == 200:
                    items = [
                        {
                            "object": "embedding",
                            "index": i,
                            "embedding": fake_vector(t, reply.dimension),
                        }
                        for i, t in enumerate(body["input"])
                    ]
                    payload = {"object": "list", "data": items[::-1], "model": reply.model}
                encoded = json.dumps(payload or {}).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(encoded)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(encoded)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> StubEmbeddingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[StubEmbeddingServer]:
    with StubEmbeddingServer() as server:
        yield server


def embedder_for(stub: StubEmbeddingServer, **options: Any) -> OpenAICompatibleEmbedder:
    defaults: dict[str, Any] = {
        "base_url": stub.base_url,
        "model": "stub-embed",
        "api_key": SecretStr("sk-test-123"),
        "backoff_base_seconds": 0.01,
        "backoff_max_seconds": 0.05,
        "timeout_seconds": 5.0,
    }
    return OpenAICompatibleEmbedder(**{**defaults, **options})


async def test_vectors_and_provenance_come_from_the_response(stub: StubEmbeddingServer) -> None:
    embedder = embedder_for(stub)
    with pytest.raises(ProvenanceUnavailable):
        _ = embedder.provenance
    result = await embedder.embed(["alpha", "beta", "gamma"])
    expected = np.asarray([fake_vector(t, DIM) for t in ["alpha", "beta", "gamma"]])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert result.vectors.dtype == np.float32
    assert np.allclose(result.vectors, expected, atol=1e-6)
    provenance = result.provenance
    assert provenance.model_id == "stub-embed-v2"
    assert provenance.weights_sha256 == "remote:stub-embed-v2"
    assert provenance.dimension == DIM
    assert provenance.normalized is True
    assert provenance.provider == "openai-compatible"
    assert embedder.provenance == provenance
    (request,) = stub.requests
    assert request["path"] == "/v1/embeddings"
    assert request["body"] == {"model": "stub-embed", "input": ["alpha", "beta", "gamma"]}
    assert request["headers"]["Authorization"] == "Bearer sk-test-123"
    await embedder.aclose()


async def test_a_500_is_retried_then_the_200_is_used(stub: StubEmbeddingServer) -> None:
    stub.script.extend([Reply(status=500, body={"error": {"type": "server_error"}}), Reply()])
    embedder = embedder_for(stub)
    result = await embedder.embed(["retry me"])
    assert len(stub.requests) == 2
    assert result.vectors.shape == (1, DIM)
    await embedder.aclose()


async def test_a_429_honours_retry_after(stub: StubEmbeddingServer) -> None:
    stub.script.extend([Reply(status=429, body={}, headers={"Retry-After": "0"}), Reply()])
    embedder = embedder_for(stub)
    await embedder.embed(["slow down"])
    assert len(stub.requests) == 2
    await embedder.aclose()


async def test_a_400_fails_at_once_with_a_clear_error(stub: StubEmbeddingServer) -> None:
    error = {"error": {"message": "echo: secret-canary", "type": "invalid_request_error"}}
    stub.script.append(Reply(status=400, body=error))
    embedder = embedder_for(stub)
    with pytest.raises(EmbeddingServiceError) as failure:
        await embedder.embed(["secret-canary"])
    assert failure.value.status_code == 400
    assert "HTTP 400" in str(failure.value)
    assert "invalid_request_error" in str(failure.value)
    assert "secret-canary" not in str(failure.value)
    assert len(stub.requests) == 1
    await embedder.aclose()


async def test_persistent_5xx_gives_up_after_max_attempts(stub: StubEmbeddingServer) -> None:
    stub.script.extend(Reply(status=503, body={}) for _ in range(5))
    embedder = embedder_for(stub, max_attempts=3)
    with pytest.raises(EmbeddingServiceError) as failure:
        await embedder.embed(["down"])
    assert failure.value.status_code == 503
    assert len(stub.requests) == 3
    await embedder.aclose()


async def test_an_unreachable_server_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAICompatibleEmbedder(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        max_attempts=2,
        backoff_base_seconds=0.01,
        timeout_seconds=2.0,
    )
    with pytest.raises(EmbeddingServiceError, match="unreachable after 2 attempts"):
        await embedder.embed(["x"])
    await embedder.aclose()


async def test_invalid_input_never_reaches_the_server(stub: StubEmbeddingServer) -> None:
    embedder = embedder_for(stub)
    for bad in ([], ["ok", ""], ["  "]):
        with pytest.raises(InvalidEmbeddingInput):
            await embedder.embed(bad)
    assert stub.requests == []
    await embedder.aclose()


async def test_batches_are_split_and_must_agree(stub: StubEmbeddingServer) -> None:
    embedder = embedder_for(stub, batch_size=2)
    result = await embedder.embed(["a", "b", "c"])
    assert [len(r["body"]["input"]) for r in stub.requests] == [2, 1]
    assert result.vectors.shape == (3, DIM)
    stub.script.append(Reply(model="another-model"))
    with pytest.raises(ProvenanceChanged):
        await embedder.embed(["d"])
    await embedder.aclose()


async def test_requested_dimensions_are_sent_and_checked(stub: StubEmbeddingServer) -> None:
    embedder = embedder_for(stub, dimensions=4)
    stub.script.append(Reply(dimension=4))
    assert (await embedder.resolve_provenance()).dimension == 4
    assert stub.requests[0]["body"]["dimensions"] == 4
    stub.script.append(Reply(dimension=5))
    with pytest.raises(EmbeddingServiceError, match="asked for 4"):
        await embedder.embed(["x"])
    await embedder.aclose()


async def test_a_malformed_body_is_an_error(stub: StubEmbeddingServer) -> None:
    stub.script.append(Reply(body={"data": [{"index": 0}]}))
    embedder = make_embedder("openai", base_url=stub.base_url, model="m")
    with pytest.raises(EmbeddingServiceError, match="unexpected body"):
        await embedder.embed(["x"])
    await embedder.aclose()
