"""The tools through the SDK's in-memory client: schemas, argument checks, answers and problems."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from mcp import Client
from pydantic import SecretStr

from engram_client import Conflict, NotFound, ValidationFailed
from engram_mcp.keys import EnvironmentKey
from engram_mcp.server import build_server
from tests.unit.mcp.fake_gateway import FakeGateway

pytestmark = pytest.mark.unit

TOOLS = {
    "agent_create",
    "agent_list",
    "memory_write",
    "memory_recall",
    "memory_list",
    "memory_update",
    "memory_history",
    "memory_forget",
    "knowledge_search",
    "knowledge_entity",
    "knowledge_relations",
    "knowledge_path",
    "contradictions_list",
    "knowledge_edit",
    "document_submit",
}


async def call(
    gateway: FakeGateway, name: str, arguments: dict[str, Any], key: str | None = "egk_unit"
) -> Any:
    server = build_server(gateway.connector, EnvironmentKey(SecretStr(key) if key else None))
    async with Client(server) as client:
        return await client.call_tool(name, arguments)


async def test_every_tool_is_listed_with_a_description_and_a_schema() -> None:
    server = build_server(FakeGateway().connector, EnvironmentKey(None))
    async with Client(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == TOOLS
    for tool in listed.values():
        assert tool.description and len(tool.description) > 150
        assert tool.input_schema["type"] == "object"
        assert "ctx" not in tool.input_schema["properties"]
    assert listed["memory_recall"].input_schema["required"] == ["agent_id", "query"]
    mode = listed["memory_recall"].input_schema["properties"]["mode"]
    assert mode["enum"] == ["hybrid", "dense", "lexical"]
    forget, search = listed["memory_forget"].annotations, listed["knowledge_search"].annotations
    assert forget is not None and forget.destructive_hint is True
    assert search is not None and search.read_only_hint is True
    assert all(t.input_schema["additionalProperties"] is False for t in listed.values())


async def test_a_write_is_sent_with_the_environment_key_and_answered_as_structured_json() -> None:
    gateway = FakeGateway()
    result = await call(
        gateway,
        "memory_write",
        {"agent_id": "agt_1", "content": "likes tea", "user_id": "u1", "metadata": {"n": 1}},
    )
    assert not result.is_error
    assert result.structured_content["memory_id"] == "mem_1"
    assert '"memory_id":"mem_1"' in result.content[0].text
    assert gateway.keys == ["egk_unit"]
    name, args, kwargs = gateway.calls[0]
    assert (name, args) == ("write_memory", ("agt_1", "likes tea"))
    assert kwargs["user_id"] == "u1" and kwargs["metadata"] == {"n": 1}
    assert kwargs["type"] == "conversation" and kwargs["allow_duplicate"] is False


async def test_a_write_passes_its_expiry_on() -> None:
    gateway = FakeGateway()
    result = await call(
        gateway, "memory_write", {"agent_id": "agt_1", "content": "in room 4", "ttl_seconds": 60}
    )
    assert not result.is_error
    at = "2030-01-01T00:00:00Z"
    await call(gateway, "memory_write", {"agent_id": "agt_1", "content": "x", "expires_at": at})
    first, second = gateway.calls[0][2], gateway.calls[1][2]
    assert first["ttl_seconds"] == 60 and first["expires_at"] is None
    assert second["expires_at"] == datetime(2030, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("memory_recall", {"agent_id": "agt_1", "query": "tea", "top_k": 0}),
        ("memory_recall", {"agent_id": "agt_1", "query": "tea", "mode": "fuzzy"}),
        ("memory_recall", {"query": "tea"}),
        ("memory_write", {"agent_id": "agt 1", "content": "x"}),
        ("memory_write", {"agent_id": "agt_1", "content": ""}),
        ("memory_write", {"agent_id": "agt_1", "content": "x", "type": "Not Snake"}),
        ("memory_write", {"agent_id": "agt_1", "content": "x", "ttl_seconds": 0}),
        ("memory_write", {"agent_id": "agt_1", "content": "x", "expires_at": "2030-01-01T00:00"}),
        ("memory_list", {"limit": 1001}),
        ("knowledge_search", {"query": "x", "mode": "semantic"}),
        ("knowledge_search", {"query": "x", "expand": 3}),
        ("knowledge_relations", {"entity_id": "supplier:s1", "depth": 4}),
        ("knowledge_relations", {"entity_id": "supplier:s1", "direction": "up"}),
        ("knowledge_path", {"from_entity": "supplier:s1"}),
        ("contradictions_list", {"status": "closed"}),
        ("document_submit", {"name": "a.csv"}),
        ("agent_create", {"name": ""}),
        ("agent_create", {"name": "x" * 201}),
        ("agent_list", {"limit": 5}),
    ],
)
async def test_invalid_arguments_are_tool_errors_and_never_reach_the_gateway(
    name: str, arguments: dict[str, Any]
) -> None:
    gateway = FakeGateway()
    result = await call(gateway, name, arguments)
    assert result.is_error
    assert gateway.calls == [] and gateway.keys == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"agent_id": "agt_1"},
        {"agent_id": "agt_1", "memory_id": "mem_1", "all_memories": True},
        {"agent_id": "agt_1", "memory_id": "mem_1", "user_id": "u1"},
        {"agent_id": "agt_1", "session_id": "s1", "all_memories": True},
    ],
)
async def test_forget_takes_exactly_one_selection(arguments: dict[str, Any]) -> None:
    gateway = FakeGateway()
    result = await call(gateway, "memory_forget", arguments)
    assert result.is_error
    assert result.structured_content["type"] == "/problems/validation-error"
    assert "exactly one of" in result.structured_content["detail"]
    assert gateway.calls == []


async def test_forget_withdraws_one_memory_a_scope_or_all() -> None:
    gateway = FakeGateway()
    one = await call(gateway, "memory_forget", {"agent_id": "agt_1", "memory_id": "mem_9"})
    scope = await call(gateway, "memory_forget", {"agent_id": "agt_1", "user_id": "u1"})
    every = await call(gateway, "memory_forget", {"agent_id": "agt_1", "all_memories": True})
    assert one.structured_content["status"] == "withdrawn"
    assert scope.structured_content["withdrawn"] == 2 and not every.is_error
    assert [(c[0], c[1], c[2]) for c in gateway.calls] == [
        ("delete_memory", ("agt_1", "mem_9"), {}),
        ("clear_memories", ("agt_1",), {"user_id": "u1", "session_id": None}),
        ("clear_memories", ("agt_1",), {"user_id": None, "session_id": None}),
    ]


async def test_a_gateway_problem_is_a_tool_error_carrying_the_problem() -> None:
    gateway = FakeGateway(
        error=NotFound(
            "no entity carrier:c9",
            status=404,
            type="/problems/not-found",
            title="Not Found",
            instance="/v1/knowledge/entities/carrier:c9",
        )
    )
    result = await call(gateway, "knowledge_entity", {"entity_id": "carrier:c9"})
    assert result.is_error
    assert result.structured_content == {
        "type": "/problems/not-found",
        "title": "Not Found",
        "status": 404,
        "detail": "no entity carrier:c9",
        "instance": "/v1/knowledge/entities/carrier:c9",
    }
    assert "no entity carrier:c9" in result.content[0].text


async def test_a_validation_problem_keeps_the_fields_it_names() -> None:
    errors = [{"loc": ["body", "filter", "metadata", "$where"], "msg": "bad key"}]
    gateway = FakeGateway(
        error=ValidationFailed(
            "bad filter", status=422, type="/problems/validation-error", errors=errors
        )
    )
    result = await call(
        gateway, "memory_recall", {"agent_id": "agt_1", "query": "x", "filter": {"metadata": {}}}
    )
    assert result.is_error and result.structured_content["errors"] == errors


async def test_without_a_key_nothing_is_sent_and_the_caller_is_told_how_to_give_one() -> None:
    gateway = FakeGateway()
    result = await call(gateway, "memory_list", {}, key=None)
    assert result.is_error
    assert result.structured_content["status"] == 401
    assert "ENGRAM_API_KEY" in result.structured_content["detail"]
    assert gateway.keys == []


async def test_reads_pass_their_options_through() -> None:
    gateway = FakeGateway()
    recall = await call(
        gateway,
        "memory_recall",
        {"agent_id": "agt_1", "query": "ORD-1", "mode": "lexical", "filter": {"user_id": "u1"}},
    )
    listed = await call(gateway, "memory_list", {"agent_id": "agt_1", "order": "recent"})
    found = await call(gateway, "knowledge_search", {"query": "Acme", "mode": "dense"})
    contradictions = await call(gateway, "contradictions_list", {"status": "open"})
    submitted = await call(gateway, "document_submit", {"name": "a.csv", "text": "id\n1\n"})
    assert recall.structured_content["mode"] == "lexical"
    assert listed.structured_content["memories"][0]["memory_id"] == "mem_1"
    assert found.structured_content["mode"] == "dense"
    assert contradictions.structured_content["contradictions"][0]["contradiction_id"] == "ctr_1"
    assert submitted.structured_content["document_id"] == "doc_1"
    by_name = {c[0]: c for c in gateway.calls}
    assert by_name["recall"][2]["filter"] == {"user_id": "u1"}
    assert by_name["list_memories"][2]["order"] == "recent"
    assert by_name["upload_document"][1:] == (("a.csv", "id\n1\n"), {"mime": None})


async def test_knowledge_search_passes_kinds_and_answers_passages_with_their_citation() -> None:
    gateway = FakeGateway()
    found = await call(gateway, "knowledge_search", {"query": "returns", "kinds": ["passage"]})
    assert not found.is_error
    (hit,) = found.structured_content["results"]
    assert hit["kind"] == "passage"
    assert (hit["document_id"], hit["version"], hit["name"]) == ("doc_1", "v1", "terms.pdf")
    assert hit["heading_path"] == ["Returns policy"] and hit["page"] == 2
    assert hit["span"] == {"start": 10, "end": 38}
    assert hit["text"] == "Opened electronics: 14 days."
    assert gateway.calls[0][2]["kinds"] == ["passage"]
    unknown = await call(gateway, "knowledge_search", {"query": "returns", "kinds": ["memo"]})
    assert unknown.is_error


async def test_agents_are_registered_and_listed_under_the_callers_key() -> None:
    gateway = FakeGateway()
    created = await call(gateway, "agent_create", {"name": "support"})
    unnamed = await call(gateway, "agent_create", {})
    listed = await call(gateway, "agent_list", {})
    assert created.structured_content == {"agent_id": "agt_new", "name": "support"}
    assert unnamed.structured_content == {"agent_id": "agt_new"}
    assert listed.structured_content == {"agents": [{"agent_id": "agt_1", "name": "support"}]}
    assert [c[:2] for c in gateway.calls] == [
        ("create_agent", ("support",)),
        ("create_agent", (None,)),
        ("list_agents", ()),
    ]
    assert gateway.keys == ["egk_unit"] * 3


async def test_an_argument_a_tool_does_not_take_is_refused_by_name_not_dropped() -> None:
    gateway = FakeGateway()
    result = await call(
        gateway,
        "memory_recall",
        {"agent_id": "agt_1", "query": "tea", "filters": {"user_id": "u1"}, "topk": 3},
    )
    assert result.is_error and gateway.calls == []
    body = result.structured_content
    assert body["status"] == 422 and body["type"] == "/problems/validation-error"
    assert "'filters'" in body["detail"] and "'topk'" in body["detail"]
    assert [e["loc"] for e in body["errors"]] == [["filters"], ["topk"]]


async def test_an_edit_names_what_it_changes_and_the_history_lists_the_versions() -> None:
    gateway = FakeGateway()
    edit = {"agent_id": "agt_1", "memory_id": "mem_1", "metadata": {}, "reason": "untag"}
    result = await call(gateway, "memory_update", edit)
    assert not result.is_error and result.structured_content["memory_id"] == "mem_2"
    assert gateway.calls[0] == (
        "update_memory",
        ("agt_1", "mem_1"),
        {
            "content": None,
            "metadata": {},
            "reason": "untag",
            "ttl_seconds": None,
            "expires_at": None,
        },
    )
    longer = {"agent_id": "agt_1", "memory_id": "mem_1", "ttl_seconds": 3600}
    assert not (await call(gateway, "memory_update", longer)).is_error
    assert gateway.calls[1][2]["ttl_seconds"] == 3600
    nothing = await call(gateway, "memory_update", {"agent_id": "agt_1", "memory_id": "mem_1"})
    assert nothing.is_error and len(gateway.calls) == 2, "nothing to change: no gateway call"
    history = await call(gateway, "memory_history", {"agent_id": "agt_1", "memory_id": "mem_1"})
    versions = history.structured_content["versions"]
    assert [v["memory_id"] for v in versions] == ["mem_1", "mem_2"]


async def test_a_stale_edit_names_the_version_to_edit_instead() -> None:
    stale = Conflict("superseded", status=409, type="/problems/edit-conflict")
    stale.superseded_by = "mem_2"
    result = await call(
        FakeGateway(error=stale),
        "memory_update",
        {"agent_id": "agt_1", "memory_id": "mem_1", "content": "new"},
    )
    assert result.is_error and result.structured_content["superseded_by"] == "mem_2"


async def test_a_curator_edit_asserts_or_withdraws_with_its_reason() -> None:
    gateway = FakeGateway()
    put = {"entity_id": "carrier:c1", "attribute": "city", "action": "assert", "reason": "r"}
    asserted = await call(gateway, "knowledge_edit", {**put, "value": "Oslo"})
    assert not asserted.is_error and asserted.structured_content["action"] == "assert"
    withdrawn = await call(gateway, "knowledge_edit", {**put, "action": "withdraw"})
    assert not withdrawn.is_error
    assert gateway.calls == [
        ("assert_fact", ("carrier:c1", "city", "Oslo"), {"reason": "r"}),
        ("withdraw_fact", ("carrier:c1", "city"), {"reason": "r"}),
    ]
    refused = await call(gateway, "knowledge_edit", put)
    assert refused.is_error and len(gateway.calls) == 2


async def test_relations_and_paths_are_passed_on_as_asked() -> None:
    gateway = FakeGateway()
    listed = await call(
        gateway,
        "knowledge_relations",
        {"entity_id": "carrier:c1", "direction": "in", "depth": 2, "valid_at": "2026-02-01"},
    )
    assert not listed.is_error
    assert listed.structured_content["relations"][0]["from"] == "carrier:c1"
    found = await call(
        gateway, "knowledge_path", {"from_entity": "supplier:s1", "to_entity": "carrier:c3"}
    )
    assert not found.is_error and found.structured_content["paths"] == []
    assert [(c[0], c[1], c[2]) for c in gateway.calls] == [
        (
            "entity_relations",
            ("carrier:c1",),
            {
                "direction": "in",
                "predicate": None,
                "depth": 2,
                "limit": 100,
                "cursor": None,
                "valid_at": "2026-02-01",
                "as_of": None,
            },
        ),
        ("find_paths", ("supplier:s1", "carrier:c3"), {"max_depth": 3}),
    ]
