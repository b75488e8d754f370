"""Memories through the client: what each call sends and how the answers read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram_client import Conflict, EngramClient, calls
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


def test_a_write_sends_its_expiry_only_when_given(stub: StubServer) -> None:
    at = datetime(2027, 1, 31, 18, tzinfo=UTC)
    stub.on("POST", AGENT_MEMORIES, Reply(202, {"memory_id": "mem_1", "status": "pending"}))
    stub.on(
        "GET",
        f"{AGENT_MEMORIES}/mem_1",
        Reply(200, {"memory_id": "mem_1", "status": "expired", "expires_at": at.isoformat()}),
    )
    with EngramClient(stub.url, "egk_test") as client:
        client.write_memory("agt_1", "locker 4417", ttl_seconds=5)
        client.write_memory("agt_1", "locker 4418", expires_at=at)
        client.write_memory("agt_1", "locker 4419")
        shown = client.get_memory("agt_1", "mem_1")
    sent = [r.json() for r in stub.requests[:3]]
    assert sent[0]["ttl_seconds"] == 5 and "expires_at" not in sent[0]
    assert sent[1]["expires_at"] == "2027-01-31T18:00:00+00:00" and "ttl_seconds" not in sent[1]
    assert "ttl_seconds" not in sent[2] and "expires_at" not in sent[2]
    assert shown.status == "expired" and shown.expires_at == at


def test_retention_is_read_and_replaced_whole(stub: StubServer) -> None:
    path = "/v1/agents/agt_1/retention"
    default = {"type": "note", "max_count": None, "max_age_seconds": 3600}
    answer = {"agent_id": "agt_1", "rules": [{"type": "scratch", "max_count": 2}]}
    stub.on("PUT", path, Reply(200, {**answer, "defaults": [default]}))
    with EngramClient(stub.url, "egk_test") as client:
        shown = client.set_retention("agt_1", [{"type": "scratch", "max_count": 2}])
    assert stub.requests[0].json() == {"rules": [{"type": "scratch", "max_count": 2}]}
    assert shown.rules[0].max_count == 2 and shown.defaults[0].max_age_seconds == 3600
    assert calls.get_retention("agt_1").retry_safe and calls.set_retention("a", []).retry_safe


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
    items: list[dict[str, object]] = [
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


def _hit(memory_id: str, fused: float, lexical: float | None) -> dict[str, object]:
    return {
        "memory_id": memory_id,
        "content": f"content of {memory_id}",
        "score": 0.8,
        "scores": {"dense": 0.8, "lexical": lexical, "fused": fused},
        "type": "fact",
        "status": "active",
        "metadata": {"topic": "contact"},
        "user_id": "u1",
        "session_id": None,
        "supersedes": None,
        "superseded_by": None,
    }


def test_a_plain_recall_sends_only_query_and_top_k() -> None:
    call = calls.recall("agt_1", "contact", top_k=3, min_score=None, types=None)
    assert call.json == {"query": "contact", "top_k": 3}


def test_recall_sends_mode_filter_and_recency_when_given() -> None:
    since = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    wanted = {"user_id": "u1", "metadata": {"priority": {"gte": 2}, "seen": {"gte": since}}}
    call = calls.recall(
        "agt_1",
        "contact",
        top_k=3,
        min_score=0.2,
        types=["fact"],
        mode="lexical",
        filter=wanted,
        recency_half_life_days=7.5,
    )
    assert call.json == {
        "query": "contact",
        "top_k": 3,
        "min_score": 0.2,
        "types": ["fact"],
        "mode": "lexical",
        "filter": {
            "user_id": "u1",
            "metadata": {"priority": {"gte": 2}, "seen": {"gte": "2025-01-02T03:04:05+00:00"}},
        },
        "recency_half_life_days": 7.5,
    }


def test_a_filter_value_that_is_no_json_nor_timestamp_is_refused_before_sending() -> None:
    with pytest.raises(TypeError, match="set"):
        calls.recall(
            "agt_1", "q", top_k=1, min_score=None, types=None, filter={"metadata": {"a": {1}}}
        )


def test_recall_reads_every_score_the_mode_and_the_hit_fields(stub: StubServer) -> None:
    answer = {
        "results": [_hit("mem_1", 0.0328, 0.41), _hit("mem_2", 0.0161, None)],
        "mode": "hybrid",
        "floor": 0.3,
        "dropped_below_floor": 1,
    }
    stub.on("POST", "/v1/agents/agt_1/recall", Reply(200, answer))
    with EngramClient(stub.url, "egk_test") as client:
        found = client.recall("agt_1", "contact", filter={"user_id": "u1"})
    first, second = found.results
    assert found.mode == "hybrid" and found.dropped_below_floor == 1
    assert (first.scores.dense, first.scores.lexical, first.scores.fused) == (0.8, 0.41, 0.0328)
    assert second.scores.lexical is None and first.score == 0.8
    assert first.status == "active" and first.metadata == {"topic": "contact"}
    assert first.user_id == "u1" and first.session_id is None and first.superseded_by is None
    assert stub.requests[0].json()["filter"] == {"user_id": "u1"}


def _memory(n: int) -> dict[str, object]:
    return {"memory_id": f"mem_{n}", "status": "active", "user_id": "u1"}


def test_a_listing_sends_scope_order_and_the_filter_as_compact_json() -> None:
    call = calls.list_memories(
        "agt_1",
        type="fact",
        user_id="u1",
        session_id="s1",
        filter={"metadata": {"tier": {"in": ["gold", "silver"]}, "flag": True}},
        limit=50,
        order="recent",
    )
    assert call.path == AGENT_MEMORIES and call.retry_safe
    assert call.params == {
        "type": "fact",
        "user_id": "u1",
        "session_id": "s1",
        "filter": '{"metadata":{"tier":{"in":["gold","silver"]},"flag":true}}',
        "limit": 50,
        "order": "recent",
    }


def test_an_unfiltered_listing_sends_no_parameters() -> None:
    assert calls.list_memories(None).params == {}
    assert calls.list_memories("agt_1", filter={}).params == {}


def test_iter_memories_follows_next_cursor_with_the_same_selection(stub: StubServer) -> None:
    stub.on(
        "GET",
        AGENT_MEMORIES,
        Reply(200, {"memories": [_memory(1), _memory(2)], "next_cursor": "cur-2"}),
        Reply(200, {"memories": [_memory(3)], "next_cursor": None}),
    )
    with EngramClient(stub.url, "egk_test") as client:
        found = client.iter_memories(
            "agt_1", user_id="u1", filter={"type": "fact"}, order="recent", page_size=2
        )
        ids = [m.memory_id for m in found]
    assert ids == ["mem_1", "mem_2", "mem_3"]
    first, second = (r.query for r in stub.requests)
    assert first == {
        "user_id": ["u1"],
        "filter": ['{"type":"fact"}'],
        "limit": ["2"],
        "order": ["recent"],
    }
    assert second == {**first, "cursor": ["cur-2"]}


def test_count_asks_the_count_route_with_the_listing_selection(stub: StubServer) -> None:
    tally = {"count": 3, "by_status": {"active": 2, "pending": 1}, "by_type": {"fact": 3}}
    stub.on("GET", f"{AGENT_MEMORIES}:count", Reply(200, tally))
    with EngramClient(stub.url, "egk_test") as client:
        counted = client.count_memories("agt_1", status="active", session_id="s1")
    assert counted.count == 3 and counted.by_status == {"active": 2, "pending": 1}
    assert counted.by_type == {"fact": 3}
    assert stub.requests[0].query == {"status": ["active"], "session_id": ["s1"]}


def test_clear_sends_the_scope_only_when_given(stub: StubServer) -> None:
    stub.on("DELETE", AGENT_MEMORIES, Reply(200, {"agent_id": "agt_1", "withdrawn": 2}))
    with EngramClient(stub.url, "egk_test") as client:
        scoped = client.clear_memories("agt_1", user_id="u1")
        everything = client.clear_memories("agt_1")
    assert scoped.withdrawn == 2 and everything.agent_id == "agt_1"
    assert [r.query for r in stub.requests] == [{"user_id": ["u1"]}, {}]


def test_an_edit_sends_only_what_it_changes_and_a_lost_race_names_the_newer_version(
    stub: StubServer,
) -> None:
    path = f"{AGENT_MEMORIES}/mem_old"
    accepted = {"memory_id": "mem_new", "status": "pending", "supersedes": "mem_old"}
    stub.on("PATCH", path, Reply(202, accepted))
    with EngramClient(stub.url, "egk_test") as client:
        edit = client.update_memory("agt_1", "mem_old", metadata={}, reason="cleared tags")
        assert edit.memory_id == "mem_new" and edit.supersedes == "mem_old"
        assert stub.requests[0].json() == {"metadata": {}, "reason": "cleared tags"}
        stub.on(
            "PATCH",
            path,
            Reply(409, {"type": "/problems/edit-conflict", "superseded_by": "mem_new"}),
        )
        with pytest.raises(Conflict) as lost:
            client.update_memory("agt_1", "mem_old", content="again")
        assert lost.value.superseded_by == "mem_new"
        assert len(stub.requests) == 2, "an edit is not retried"


def test_a_history_reads_every_version_with_its_author(stub: StubServer) -> None:
    versions = [
        {"memory_id": "mem_old", "status": "superseded", "author": None, "edit_reason": None},
        {
            "memory_id": "mem_new",
            "status": "active",
            "author": {"key_id": "key_7", "role": "admin"},
            "edit_reason": "typo",
            "created_at": "2026-01-01T00:00:00Z",
        },
    ]
    body = {"memory_id": "mem_old", "agent_id": "agt_1", "versions": versions}
    stub.on("GET", f"{AGENT_MEMORIES}/mem_old/history", Reply(200, body))
    with EngramClient(stub.url, "egk_test") as client:
        history = client.memory_history("agt_1", "mem_old")
    assert [v.memory_id for v in history.versions] == ["mem_old", "mem_new"]
    newest = history.versions[-1]
    assert newest.author is not None and newest.author.key_id == "key_7"
    assert newest.edit_reason == "typo" and newest.created_at == datetime(2026, 1, 1, tzinfo=UTC)
