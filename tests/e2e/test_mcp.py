"""Issue 29: an MCP client, over stdio and over streamable HTTP, lists Engram's tools, writes a
memory and recalls it, submits a document, searches the knowledge (by kind too: a prose policy's
passages) and reads an entity; another tenant's key sees none of it, and an HTTP request without
a key is refused whatever the server's environment holds."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from engram_devstack import free_port
from tests.support.platform import Platform
from tests.support.polling import until_async
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant

CSV = "id,name,city\nc1,Acme Freight,Paris\nc2,Beta Lines,Oslo\n"
POLICY = """# Returns policy

Opened electronics can be returned within 14 days of delivery; a restocking fee of 15% applies.

## Damaged goods

If an item arrives damaged, contact us within 48 hours with a photo of the damage.
"""
TOOLS = {
    "agent_create",
    "agent_list",
    "memory_write",
    "memory_recall",
    "memory_list",
    "memory_forget",
    "memory_update",
    "memory_history",
    "knowledge_search",
    "knowledge_entity",
    "knowledge_relations",
    "knowledge_path",
    "contradictions_list",
    "knowledge_edit",
    "document_submit",
}


@dataclass(frozen=True)
class Setup:
    """The platform, the first tenant's agent, a second tenant's key and the MCP HTTP endpoint."""

    platform: Platform
    agent_id: str
    other_key: str
    http_url: str


@pytest.fixture(scope="module")
def setup(platform: Platform, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """An agent of the first tenant, a second tenant, and `python -m engram_mcp` serving HTTP
    with the first tenant's key in its environment (which HTTP callers must never get)."""
    with platform.client() as http:
        created = http.post("/v1/agents", json={"name": "mcp"})
        assert created.status_code == 201, created.text
    other_key = create_tenant(platform.env, "mcp-other")
    server = ServiceProcess(
        "mcp",
        {
            "ENGRAM_URL": platform.url,
            "ENGRAM_API_KEY": platform.key,
            "ENGRAM_MCP_TRANSPORT": "http",
        },
        free_port(),
        Path(tmp_path_factory.mktemp("mcp-logs")),
    )
    server.start()
    try:
        yield Setup(platform, created.json()["agent_id"], other_key, f"{server.url}/mcp")
    finally:
        server.stop()


@asynccontextmanager
async def over_stdio(setup: Setup, key: str | None) -> AsyncIterator[Client]:
    """`python -m engram_mcp` spawned the way an MCP host does, its key in its environment."""
    env = {"ENGRAM_URL": setup.platform.url, **({"ENGRAM_API_KEY": key} if key else {})}
    params = StdioServerParameters(command=sys.executable, args=["-m", "engram_mcp"], env=env)
    async with Client(params, read_timeout_seconds=60) as client:
        yield client


@asynccontextmanager
async def over_http(setup: Setup, key: str | None) -> AsyncIterator[Client]:
    """The running HTTP transport, the key (if any) as the bearer token of every request."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(setup.http_url, http_client=http)
        async with Client(transport, read_timeout_seconds=60) as client:
            yield client


TRANSPORTS = {"stdio": over_stdio, "http": over_http}


async def tool(client: Client, name: str, /, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; its structured answer."""
    result = await client.call_tool(name, arguments)
    assert not result.is_error, f"{name}: {result.content}"
    assert result.structured_content is not None
    return result.structured_content


async def problem(client: Client, name: str, /, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must fail; the problem it carries."""
    result = await client.call_tool(name, arguments)
    assert result.is_error, f"{name} should have failed: {result.content}"
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_an_agent_remembers_recalls_and_reads_knowledge(setup: Setup, transport: str) -> None:
    opened = TRANSPORTS[transport]
    agent = setup.agent_id
    marker = uuid.uuid4().hex[:8]
    content = f"The customer {marker} prefers deliveries before 9am on weekdays"
    async with opened(setup, setup.platform.key) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        registered = await tool(client, "agent_create", name=f"mcp-{marker}")
        listed = {a["agent_id"]: a for a in (await tool(client, "agent_list"))["agents"]}
        assert listed[registered["agent_id"]]["name"] == f"mcp-{marker}" and agent in listed

        written = await tool(client, "memory_write", agent_id=agent, content=content, user_id="u1")
        memory_id = written["memory_id"]
        assert written["status"] == "pending"

        async def stored() -> bool:
            page = await tool(client, "memory_list", agent_id=agent, status="active", limit=100)
            return any(m["memory_id"] == memory_id for m in page["memories"])

        await until_async(stored, "the memory active")
        recalled = await tool(
            client, "memory_recall", agent_id=agent, query=f"when does {marker} want deliveries?"
        )
        assert recalled["results"][0]["memory_id"] == memory_id
        assert recalled["results"][0]["content"] == content and recalled["mode"] == "hybrid"

        submitted = await tool(client, "document_submit", name="carriers.csv", text=CSV)
        assert submitted["document_id"]

        async def found() -> list[dict[str, Any]]:
            hits = await tool(client, "knowledge_search", query="Acme Freight", top_k=3)
            return list(hits["results"])

        hits = await until_async(found, "the carriers searchable")
        assert hits[0]["entity_id"] == "carrier:c1"
        entity = await tool(client, "knowledge_entity", entity_id="carrier:c1")
        assert {f["attribute"] for f in entity["facts"]} >= {"name", "city"}
        assert "Acme Freight" in entity["article"]
        assert (await tool(client, "contradictions_list", status="open"))["contradictions"] == []

        await tool(client, "document_submit", name="returns.md", text=POLICY)
        question = "how long do I have to send back opened electronics?"

        async def cited() -> list[dict[str, Any]]:
            hits = await tool(client, "knowledge_search", query=question, kinds=["passage"])
            return list(hits["results"])

        passages = await until_async(cited, "the policy's passages searchable")
        assert {hit["kind"] for hit in passages} == {"passage"}
        assert (
            passages[0]["heading_path"] == ["Returns policy"] and "14 days" in passages[0]["text"]
        )
        facts = await tool(client, "knowledge_search", query=question, kinds=["fact"])
        assert all(hit["kind"] == "fact" for hit in facts["results"])

        missing = await problem(client, "knowledge_entity", entity_id="carrier:nope")
        assert missing["status"] == 404 and missing["type"].endswith("/not-found")
        invalid = await problem(
            client, "memory_recall", agent_id=agent, query="x", filter={"metadata": {"$where": 1}}
        )
        assert invalid["status"] == 422 and invalid["detail"]

    async with opened(setup, setup.other_key) as other:
        foreign = await problem(other, "memory_list", agent_id=agent)
        assert foreign["status"] == 404 and foreign["detail"]
        assert (await problem(other, "memory_recall", agent_id=agent, query=content))[
            "status"
        ] == 404
        assert (await problem(other, "knowledge_entity", entity_id="carrier:c1"))["status"] == 404
        assert (await tool(other, "memory_list"))["memories"] == []
        theirs = {a["agent_id"] for a in (await tool(other, "agent_list"))["agents"]}
        assert not theirs & {agent, registered["agent_id"]}
        assert (await tool(other, "knowledge_search", query="Acme Freight"))["results"] == []
        assert (await problem(other, "memory_forget", agent_id=agent, all_memories=True))[
            "status"
        ] == 404


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_a_call_without_a_key_is_refused(setup: Setup, transport: str) -> None:
    async with TRANSPORTS[transport](setup, None) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        refused = await problem(client, "memory_list", agent_id=setup.agent_id)
    assert refused["status"] == 401 and refused["type"].endswith("/unauthorized")
    assert "ENGRAM_API_KEY" in refused["detail"] or "Bearer" in refused["detail"]
