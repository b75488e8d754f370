"""Isolation: forged ids, another tenant's ids, bad keys and unscoped listings leak nothing."""

from __future__ import annotations

import pytest

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write

pytestmark = pytest.mark.shared_stack

PROBLEM = "application/problem+json"
SECRET = "isolation-secret-contents-of-tenant-a"


def _memory_calls(stack: MemoryStack) -> int:
    """How many internal requests reached the memory service (it logs each recall and listing)."""
    return stack.memory.logs().count('"msg": "recall"')


@pytest.fixture
def seeded(stack: MemoryStack) -> dict[str, str]:
    """Tenant A with two agents (one holding a memory), tenant B with one agent."""
    key_a, key_b = stack.tenant("a"), stack.tenant("b")
    with stack.client(key_a) as a, stack.client(key_b) as b:
        a1, a2, b1 = new_agent(a), new_agent(a), new_agent(b)
        memory = write(a, a1, SECRET)
        wait_status(a, a1, memory, {"active"})
        b_memory = write(b, b1, "tenant b's own memory")
        wait_status(b, b1, b_memory, {"active"})
    return {"key_a": key_a, "key_b": key_b, "a1": a1, "a2": a2, "b1": b1, "memory": memory}


def _no_leak(response_text: str) -> None:
    assert SECRET not in response_text


def test_another_tenant_gets_404_and_the_memory_service_is_never_asked(
    stack: MemoryStack, seeded: dict[str, str]
) -> None:
    a1, memory = seeded["a1"], seeded["memory"]
    before = _memory_calls(stack)
    with stack.client(seeded["key_b"]) as b:
        responses = [
            b.post(f"/v1/agents/{a1}/recall", json={"query": SECRET, "min_score": -1}),
            b.get(f"/v1/agents/{a1}/memories/{memory}"),
            b.get(f"/v1/agents/{a1}/memories"),
            b.delete(f"/v1/agents/{a1}/memories/{memory}"),
            b.delete(f"/v1/agents/{a1}/memories"),
            b.post(f"/v1/agents/{a1}/memories", json={"content": "planted by b"}),
            b.get(f"/v1/agents/{seeded['b1']}/memories/{memory}"),
            b.delete(f"/v1/agents/{seeded['b1']}/memories/{memory}"),
        ]
        own = b.get("/v1/memories").json()["memories"]
    for response in responses:
        assert response.status_code == 404, response.text
        assert response.headers["content-type"].startswith(PROBLEM)
        _no_leak(response.text)
    assert _memory_calls(stack) == before
    assert [m["agent_id"] for m in own] == [seeded["b1"]]
    with stack.client(seeded["key_a"]) as a:
        still = a.get(f"/v1/agents/{a1}/memories/{memory}").json()
    assert still["status"] == "active" and still["content"] == SECRET


def test_another_agent_of_the_same_tenant_sees_nothing(
    stack: MemoryStack, seeded: dict[str, str]
) -> None:
    a2, memory = seeded["a2"], seeded["memory"]
    with stack.client(seeded["key_a"]) as a:
        recalled = a.post(f"/v1/agents/{a2}/recall", json={"query": SECRET, "min_score": -1})
        assert recalled.status_code == 200 and recalled.json()["results"] == []
        assert recalled.json()["dropped_below_floor"] == 0
        for response in (
            a.get(f"/v1/agents/{a2}/memories/{memory}"),
            a.delete(f"/v1/agents/{a2}/memories/{memory}"),
        ):
            assert response.status_code == 404
            _no_leak(response.text)
        assert a.get(f"/v1/agents/{a2}/memories").json()["memories"] == []
        everything = a.get("/v1/memories").json()["memories"]
    assert [m["memory_id"] for m in everything] == [memory]


FORGED_AGENT_IDS = ["{'$ne': null}", "..%2F..%2Fx", "agt_x%00", "*", "agt_unknown", "%24where"]
BAD_HEADERS = [None, "", "Bearer", "Bearer forged", "Bearer {}", "Basic x"]


def test_forged_agent_ids_are_404_or_422(stack: MemoryStack, seeded: dict[str, str]) -> None:
    with stack.client(seeded["key_a"]) as a:
        for agent_id in FORGED_AGENT_IDS:
            for response in (
                a.post(f"/v1/agents/{agent_id}/recall", json={"query": SECRET}),
                a.get(f"/v1/agents/{agent_id}/memories"),
                a.get(f"/v1/agents/{agent_id}/memories/{seeded['memory']}"),
            ):
                assert response.status_code in (404, 422), response.text
                assert response.headers["content-type"].startswith(PROBLEM)
                _no_leak(response.text)


def test_missing_empty_or_forged_keys_get_401(stack: MemoryStack, seeded: dict[str, str]) -> None:
    a1 = seeded["a1"]
    with stack.client(None) as anon:
        for header in BAD_HEADERS:
            headers = {"Authorization": header} if header is not None else {}
            for response in (
                anon.post(f"/v1/agents/{a1}/recall", json={"query": SECRET}, headers=headers),
                anon.get(f"/v1/agents/{a1}/memories", headers=headers),
                anon.get("/v1/memories", headers=headers),
                anon.post(f"/v1/agents/{a1}/memories", json={"content": "x"}, headers=headers),
            ):
                assert response.status_code == 401
                assert response.headers["content-type"].startswith(PROBLEM)
                _no_leak(response.text)


def test_filter_values_must_be_scalars_and_search_is_literal(
    stack: MemoryStack, seeded: dict[str, str]
) -> None:
    a1 = seeded["a1"]
    with stack.client(seeded["key_a"]) as a:
        bad = [
            a.get(f"/v1/agents/{a1}/memories?type[$ne]=x"),
            a.get(f"/v1/agents/{a1}/memories?status=active&status=withdrawn"),
            a.get("/v1/memories?agent_id=" + seeded["b1"]),
            a.post(f"/v1/agents/{a1}/recall", json={"query": "x", "types": {"$ne": "a"}}),
            a.post(f"/v1/agents/{a1}/recall", json={"query": {"$regex": ".*"}}),
            a.post(
                f"/v1/agents/{a1}/memories", json={"content": "x", "derived_from": [{"$gt": ""}]}
            ),
            a.post(f"/v1/agents/{a1}/memories", json={"content": "x", "supersedes": {"$ne": 1}}),
        ]
        for response in bad:
            assert response.status_code == 422, response.text
            assert response.headers["content-type"].startswith(PROBLEM)
            _no_leak(response.text)
        for pattern in (".*", "^isolation", "[a-z]+", "(", "secret-contents"):
            found = a.get(f"/v1/agents/{a1}/memories", params={"search": pattern})
            assert found.status_code == 200
            ids = [m["memory_id"] for m in found.json()["memories"]]
            assert ids == ([seeded["memory"]] if pattern == "secret-contents" else [])
