"""The lean client the recall hop uses: Content-Length and chunked answers, a kept-alive
connection reused, one the server closed replaced, and an unreachable service a 503."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from engram_devstack import free_port
from engram_gateway.adapters.internal import InternalServices
from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER
from engram_platform.lean_http import LeanJsonClient
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit


class FakeService:
    """A tiny HTTP/1.1 server: answers each request with the next canned answer, remembers the
    requests, and closes a connection after `close_after` answers on it."""

    def __init__(self, answers: list[bytes], close_after: int = 1000) -> None:
        self.answers = answers
        self.close_after = close_after
        self.requests: list[bytes] = []
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        for _ in range(self.close_after):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            self.requests.append(head + await reader.readexactly(length))
            writer.write(self.answers.pop(0))
            await writer.drain()
        writer.close()


def answer(body: bytes, status: str = "200 OK") -> bytes:
    return f"HTTP/1.1 {status}\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body


@pytest.fixture
async def served() -> AsyncIterator[tuple[FakeService, str]]:
    service = FakeService([])
    port = free_port()
    server = await asyncio.start_server(service.handle, "127.0.0.1", port)
    yield service, f"http://127.0.0.1:{port}"
    server.close()


async def test_answers_come_back_over_one_kept_connection(
    served: tuple[FakeService, str],
) -> None:
    service, url = served
    service.answers += [
        answer(b'{"a": 1}'),
        b'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{"b\r\n5\r\n": 2}\r\n0\r\n\r\n',
    ]
    client = LeanJsonClient(url, timeout=5)
    assert await client.post("/x", b"{}", {"h": "1"}) == (200, b'{"a": 1}')
    assert await client.post("/y", b"{}", {"h": "1"}) == (200, b'{"b": 2}')
    await client.close()
    assert service.connections == 1
    assert service.requests[0].startswith(b"POST /x HTTP/1.1\r\n")


async def test_a_connection_the_server_closed_is_replaced(
    served: tuple[FakeService, str],
) -> None:
    service, url = served
    service.close_after = 1
    service.answers += [answer(b"1"), answer(b"2")]
    client = LeanJsonClient(url, timeout=5)
    assert await client.post("/x", b"{}", {}) == (200, b"1")
    await asyncio.sleep(0.05)
    assert await client.post("/x", b"{}", {}) == (200, b"2")
    await client.close()
    assert service.connections == 2


async def test_the_recall_hop_carries_the_token_and_tenant(
    served: tuple[FakeService, str],
) -> None:
    service, url = served
    service.answers.append(answer(b"{}", "404 Not Found"))
    owners = InternalServices({"memory": url}, token="s3cret", timeout=5)
    assert await owners.read_post("memory", "/r", b"{}", tenant_id="tnt_a") == (404, b"{}")
    await owners.close()
    head = service.requests[0].decode().lower()
    assert f"{TOKEN_HEADER}: s3cret" in head
    assert f"{TENANT_HEADER}: tnt_a" in head


async def test_an_unreachable_service_is_a_503() -> None:
    owners = InternalServices({"memory": f"http://127.0.0.1:{free_port()}"}, token="t", timeout=2)
    with pytest.raises(Problem) as raised:
        await owners.read_post("memory", "/r", b"{}", tenant_id="tnt_a")
    assert raised.value.status == 503
