"""Scopes, metadata filters, dedup, listing pages and counts over the real broker and database."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.integration.memory.test_hybrid_recall import recall, wait_active, write_all

pytestmark = pytest.mark.shared_stack

PROBLEM = "application/problem+json"
BAD_FILTERS: list[Any] = [
    {"metadata": {"k": {"$gt": 1}}},
    {"metadata": {"$where": "1"}},
    {"metadata": {"k": {"regex": ".*"}}},
    {"metadata": {"k": {"eq": {"nested": 1}}}},
    {"metadata": {"k": [1, 2]}},
    {"metadata": {"k": {"in": "x"}}},
    {"metadata": {"k": {"gte": "yesterday"}}},
    {"metadata": {"k": {"eq": 1, "in": [1]}}},
    {"user_id": {"$ne": "u1"}},
    {"user_id": ["u1", "u2"]},
    {"tenant_id": "someone-else"},
    {"agent_id": "another-agent"},
    "user_id=u1",
    ["u1"],
]


def memories(client: httpx.Client, agent: str, **params: Any) -> list[dict[str, Any]]:
    answer = client.get(f"/v1/agents/{agent}/memories", params=params)
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["memories"]
    return found


@pytest.fixture
def scoped(stack: MemoryStack) -> dict[str, Any]:
    """Two tenants; tenant A's agent has memories of two users and sessions, another agent
    and tenant B hold look-alikes."""
    key_a, key_b = stack.tenant("a"), stack.tenant("b")
    with stack.client(key_a) as a, stack.client(key_b) as b:
        agent, other, foreign = new_agent(a), new_agent(a), new_agent(b)
        rows = {
            "u1-s1": write(
                a,
                agent,
                "u1 likes green tea",
                user_id="u1",
                session_id="s1",
                metadata={"channel": "chat", "priority": 3, "due": "2026-03-01"},
            ),
            "u1-s2": write(
                a,
                agent,
                "u1 likes oolong tea",
                user_id="u1",
                session_id="s2",
                metadata={"channel": "email", "priority": 7, "urgent": True},
            ),
            "u2": write(
                a,
                agent,
                "u2 likes black tea",
                user_id="u2",
                metadata={"channel": "chat", "priority": 5, "due": "2026-01-15"},
            ),
            "none": write(a, agent, "the office serves tea at four", metadata={"priority": 1}),
            "in-other": write(a, other, "u1 likes green tea in the other agent", user_id="u1"),
            "in-foreign": write(b, foreign, "u1 likes green tea in tenant b", user_id="u1"),
        }
        owners = {"in-other": (a, other), "in-foreign": (b, foreign)}
        for name, memory_id in rows.items():
            client, owner = owners.get(name, (a, agent))
            wait_status(client, owner, memory_id, {"active"})
    return {"a": key_a, "b": key_b, "agent": agent, "other": other, "foreign": foreign, **rows}


def test_recall_and_listing_stay_inside_the_scope_and_the_filter(
    stack: MemoryStack, scoped: dict[str, Any]
) -> None:
    agent = scoped["agent"]
    everything = {"min_score": -1.0, "top_k": 10}
    with stack.client(scoped["a"]) as a:

        def recalled(**options: Any) -> set[str]:
            body = recall(a, agent, "which tea does the user like", **everything, **options)
            return {r["memory_id"] for r in body["results"]}

        assert recalled(filter={"user_id": "u1"}) == {scoped["u1-s1"], scoped["u1-s2"]}
        assert recalled(filter={"user_id": "u1", "session_id": "s2"}) == {scoped["u1-s2"]}
        assert recalled(filter={"metadata": {"channel": "chat"}}) == {scoped["u1-s1"], scoped["u2"]}
        assert recalled(filter={"metadata": {"priority": {"gte": 3, "lte": 5}}}) == {
            scoped["u1-s1"],
            scoped["u2"],
        }
        assert recalled(filter={"metadata": {"channel": {"in": ["email", "fax"]}}}) == {
            scoped["u1-s2"]
        }
        assert recalled(filter={"metadata": {"urgent": True}}) == {scoped["u1-s2"]}
        assert recalled(filter={"metadata": {"channel": {"exists": False}}}) == {scoped["none"]}
        assert recalled(filter={"metadata": {"due": {"lte": "2026-02-01T00:00:00+00:00"}}}) == {
            scoped["u2"]
        }
        hit = recall(a, agent, "green tea", filter={"user_id": "u1", "session_id": "s1"})
        [first] = hit["results"]
        assert (first["user_id"], first["session_id"]) == ("u1", "s1")
        assert first["metadata"] == {"channel": "chat", "priority": 3, "due": "2026-03-01"}
        assert {"supersedes", "superseded_by", "created_at"} <= set(first)
        listed = memories(
            a, agent, user_id="u1", filter=json.dumps({"metadata": {"priority": {"gte": 5}}})
        )
        assert [m["memory_id"] for m in listed] == [scoped["u1-s2"]]
        counted = a.get(f"/v1/agents/{agent}/memories:count", params={"user_id": "u1"}).json()
        assert counted == {"count": 2, "by_status": {"active": 2}, "by_type": {"conversation": 2}}
    with stack.client(scoped["b"]) as b:
        mine = recall(b, scoped["foreign"], "green tea", filter={"user_id": "u1"}, min_score=-1)
        assert [r["memory_id"] for r in mine["results"]] == [scoped["in-foreign"]]
        assert b.post(f"/v1/agents/{agent}/recall", json={"query": "tea"}).status_code == 404


@pytest.mark.parametrize("bad", BAD_FILTERS, ids=[json.dumps(f) for f in BAD_FILTERS])
def test_every_malformed_filter_is_a_422_naming_the_field(stack: MemoryStack, bad: Any) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        answers = [
            client.post(f"/v1/agents/{agent}/recall", json={"query": "tea", "filter": bad}),
            client.get(f"/v1/agents/{agent}/memories", params={"filter": json.dumps(bad)}),
            client.get(f"/v1/agents/{agent}/memories:count", params={"filter": json.dumps(bad)}),
        ]
    for answer in answers:
        assert answer.status_code == 422, answer.text
        assert answer.headers["content-type"].startswith(PROBLEM)
        assert any("filter" in ".".join(e["loc"]) for e in answer.json()["errors"]), answer.text


def test_unknown_parameters_are_refused_and_a_scope_clear_removes_that_scope_only(
    stack: MemoryStack, scoped: dict[str, Any]
) -> None:
    agent = scoped["agent"]
    with stack.client(scoped["a"]) as a:
        refused = a.delete(f"/v1/agents/{agent}/memories", params={"user": "u2"})
        assert refused.status_code == 422 and "user" in refused.text
        assert len(memories(a, agent, status="active")) == 4
        cleared = a.delete(
            f"/v1/agents/{agent}/memories", params={"user_id": "u1", "session_id": "s1"}
        )
        assert cleared.json() == {"agent_id": agent, "withdrawn": 1}
        cleared = a.delete(f"/v1/agents/{agent}/memories", params={"user_id": "u2"})
        assert cleared.json() == {"agent_id": agent, "withdrawn": 1}
        left = {m["memory_id"] for m in memories(a, agent, status="active")}
        assert left == {scoped["u1-s2"], scoped["none"]}
        assert wait_status(a, scoped["other"], scoped["in-other"], {"active"})
    with stack.client(scoped["b"]) as b:
        assert wait_status(b, scoped["foreign"], scoped["in-foreign"], {"active"})


def test_concurrent_identical_writes_leave_one_active_memory(stack: MemoryStack) -> None:
    key = stack.tenant()
    with stack.client(key) as client:
        agent = new_agent(client)
    answers: list[httpx.Response] = []
    lock = threading.Lock()
    start = threading.Barrier(12)

    def post() -> None:
        with stack.client(key) as mine:
            start.wait()
            answer = mine.post(
                f"/v1/agents/{agent}/memories",
                json={"content": "The Gdansk dock closes at 14:00", "user_id": "u1"},
            )
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=post) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {a.status_code for a in answers} <= {200, 202}
    ids = {a.json()["memory_id"] for a in answers}
    with stack.client(key) as c:
        finals = [wait_status(c, agent, m, {"active", "rejected"}) for m in ids]
        live = [f for f in finals if f["status"] == "active"]
        assert len(live) == 1
        assert all(
            f["duplicate_of"] == live[0]["memory_id"] for f in finals if f["status"] == "rejected"
        )
        again = c.post(
            f"/v1/agents/{agent}/memories",
            json={"content": "the gdansk DOCK closes at 14:00 ", "user_id": "u1"},
        )
        assert again.status_code == 200
        assert again.json() == {
            "memory_id": live[0]["memory_id"],
            "status": "active",
            "deduplicated": True,
            "status_url": f"/v1/agents/{agent}/memories/{live[0]['memory_id']}",
        }
        forced = c.post(
            f"/v1/agents/{agent}/memories",
            json={
                "content": "The Gdansk dock closes at 14:00",
                "user_id": "u1",
                "allow_duplicate": True,
            },
        )
        assert forced.status_code == 202
        assert (
            wait_status(c, agent, forced.json()["memory_id"], {"active", "rejected"})["status"]
            == "active"
        )
        counted = c.get(f"/v1/agents/{agent}/memories:count", params={"status": "active"}).json()
        assert counted["count"] == 2


def test_the_cursor_walks_2500_memories_with_no_gap_and_no_repeat(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        ids = write_all(client, agent, [f"memory number {n} of the walk" for n in range(2500)])
        wait_active(client, agent, 2500, timeout=300)
        for order, limit in (("oldest", 1000), ("recent", 97)):
            walked: list[tuple[str, str]] = []
            cursor: str | None = None
            while True:
                params: dict[str, Any] = {"limit": limit, "order": order}
                if cursor:
                    params["cursor"] = cursor
                page = client.get(f"/v1/agents/{agent}/memories", params=params).json()
                walked += [(m["created_at"], m["memory_id"]) for m in page["memories"]]
                cursor = page["next_cursor"]
                if cursor is None:
                    break
            seen = [memory_id for _, memory_id in walked]
            assert len(seen) == len(set(seen)) == 2500
            assert set(seen) == set(ids)
            assert walked == sorted(walked, reverse=order == "recent")
        refused = client.get(f"/v1/agents/{agent}/memories", params={"cursor": "bogus"})
        assert refused.status_code == 422
        counted = client.get(f"/v1/agents/{agent}/memories:count").json()
        assert counted["count"] == 2500 and counted["by_status"] == {"active": 2500}


def test_content_the_memory_service_would_refuse_is_a_422_at_the_door(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        for content in ("", "   ", "\n\t ", "x" * 8001):
            answer = client.post(f"/v1/agents/{agent}/memories", json={"content": content})
            assert answer.status_code == 422, answer.text
            assert answer.json()["errors"][0]["loc"] == ["body", "content"]
        batch = client.post(
            f"/v1/agents/{agent}/memories:batch",
            json={"memories": [{"content": "fine"}, {"content": "  "}]},
        )
        assert batch.status_code == 422
        assert batch.json()["errors"][0]["loc"] == ["body", "memories", "1", "content"]
        assert client.get(f"/v1/agents/{agent}/memories:count").json()["count"] == 0
