"""Memories through the client: what each call sends and how the answers read."""

from __future__ import annotations

import pytest

from engram_client import EngramClient, calls
from tests.unit.client.stub import Reply, StubServer

pytestmark = pytest.mark.unit

AGENT_MEMORIES = "/v1/agents/agt_1/memories"


def _write(
    user_id: str | None = None, session_id: str | None = None, allow_duplicate: bool = False
) -> dict[str, object]:
    call = calls.write_memory(
        "agt_1",
        "prefers email",
        type="fact",
        metadata=None,
        derived_from=None,
        supersedes=None,
        idempotency_key="k1",
        user_id=user_id,
        session_id=session_id,
        allow_duplicate=allow_duplicate,
    )
    return dict(call.json)


def test_a_write_sends_its_scope_and_allow_duplicate_only_when_given() -> None:
    plain = _write()
    scoped = _write(user_id="u1", session_id="s1", allow_duplicate=True)
    assert plain == {
        "content": "prefers email",
        "type": "fact",
        "metadata": {},
        "derived_from": [],
        "idempotency_key": "k1",
    }
    assert scoped == {**plain, "user_id": "u1", "session_id": "s1", "allow_duplicate": True}


def test_a_deduplicated_write_answers_200_with_the_live_memory(stub: StubServer) -> None:
    existing = {
        "memory_id": "mem_old",
        "status": "active",
        "deduplicated": True,
        "status_url": f"{AGENT_MEMORIES}/mem_old",
    }
    stub.on("POST", AGENT_MEMORIES, Reply(200, existing))
    with EngramClient(stub.url, "egk_test") as client:
        accepted = client.write_memory("agt_1", "Prefers  EMAIL", user_id="u1")
    assert accepted.deduplicated and accepted.memory_id == "mem_old"
    assert accepted.status == "active"
    assert stub.requests[0].json()["user_id"] == "u1"


def test_a_queued_write_is_not_deduplicated(stub: StubServer) -> None:
    stub.on("POST", AGENT_MEMORIES, Reply(202, {"memory_id": "mem_1", "status": "pending"}))
    with EngramClient(stub.url, "egk_test") as client:
        accepted = client.write_memory("agt_1", "prefers email", allow_duplicate=True)
    assert not accepted.deduplicated and accepted.status == "pending"
    assert stub.requests[0].json()["allow_duplicate"] is True


def test_batch_items_keep_their_scope_and_may_come_back_deduplicated(stub: StubServer) -> None:
    answer = {
        "memories": [
            {"memory_id": "mem_new", "status": "pending"},
            {"memory_id": "mem_old", "status": "active", "deduplicated": True},
        ]
    }
    stub.on("POST", f"{AGENT_MEMORIES}:batch", Reply(202, answer))
    items = [
        {"content": "first", "user_id": "u1", "session_id": "s1"},
        {"content": "second", "allow_duplicate": False},
    ]
    with EngramClient(stub.url, "egk_test") as client:
        accepted = client.write_memories("agt_1", items)
    assert [a.deduplicated for a in accepted] == [False, True]
    sent = stub.requests[0].json()["memories"]
    assert sent[0]["user_id"] == "u1" and sent[0]["session_id"] == "s1"
    assert sent[1]["allow_duplicate"] is False


def test_a_rejected_duplicate_names_the_memory_it_duplicates(stub: StubServer) -> None:
    row = {
        "memory_id": "mem_2",
        "agent_id": "agt_1",
        "user_id": "u1",
        "session_id": None,
        "status": "rejected",
        "reason": "duplicate",
        "duplicate_of": "mem_1",
        "content_sha256": "ab12",
    }
    stub.on("GET", f"{AGENT_MEMORIES}/mem_2", Reply(200, row))
    with EngramClient(stub.url, "egk_test") as client:
        memory = client.get_memory("agt_1", "mem_2")
    assert (memory.reason, memory.duplicate_of, memory.user_id) == ("duplicate", "mem_1", "u1")
    assert memory.session_id is None
    assert memory.model_extra == {"content_sha256": "ab12"}
