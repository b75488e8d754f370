"""Memory handlers over fakes: validation before embedding, idempotency, retention, cascades."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_embedding.handlers import EmbeddingHandlers
from engram_embedding.service.requests import EmbeddingRequests
from engram_events import Envelope, new_event
from engram_events.catalog import AGENT_DELETED, MEMORY_WRITE_REQUESTED, RECORD_TOMBSTONED
from engram_events.content import ContentLimits
from engram_events.payloads.embeddings import VectorProvenance
from engram_events.payloads.memories import AgentDeleted, MemoryWriteRequested
from engram_events.payloads.records import RecordTombstoned
from engram_events.retention import AgentRetention, RetentionRule
from engram_memory.adapters.vectors import MemoryVectors, point_id
from engram_memory.domain.retention import RetentionPolicy
from engram_memory.domain.rows import MemoryRow
from engram_memory.handlers import MemoryHandlers
from engram_memory.service.cascades import Cascades
from engram_memory.service.dedup import Dedup
from engram_memory.service.recall import Recall
from engram_memory.service.retention import Retention
from engram_memory.service.storing import Storing
from engram_memory.service.withdrawal import Withdrawals
from engram_memory.service.writes import Writes
from engram_vectors import ExactNumpyStore, LexicalMismatch
from engram_vectors.lexical import LEXICAL_ENCODER, V1, V2, document_vector
from tests.unit.memory.fakes import CountingEmbedder, FakeRows, FakeRules, FakeSlots, refused_write

pytestmark = pytest.mark.unit


class Pipeline:
    """Memory handlers wired to an in-process embedding handler with a counting embedder."""

    def __init__(
        self,
        policies: list[RetentionPolicy] | None = None,
        *,
        require_all: bool = False,
        rows: FakeRows | None = None,
        vectors: type[MemoryVectors] = MemoryVectors,
    ) -> None:
        self.rows = rows or FakeRows()
        self.slots = FakeSlots()
        self.store = ExactNumpyStore()
        self.vectors = vectors(self.store, "memories")
        self.embedder = CountingEmbedder()
        self.embedding = EmbeddingHandlers(EmbeddingRequests(self.embedder, batch_size=16))
        withdrawals = Withdrawals(self.rows, self.vectors)
        self.rules = FakeRules()
        self.retention = Retention(policies or [], self.rows, withdrawals, self.rules)
        limits = ContentLimits(min_chars=2, max_chars=200)
        dedup = Dedup(self.slots, self.rows)
        self.handlers = MemoryHandlers(
            Writes(
                self.rows,
                dedup,
                limits,
                require_all_sources=require_all,
                fingerprint=lambda: self.embedder.provenance.fingerprint,
            ),
            Storing(self.rows, self.vectors, self.retention),
            Cascades(self.rows, withdrawals, self.rules, require_all_sources=require_all),
        )
        self.clock = datetime(2026, 1, 1, tzinfo=UTC)

    async def open(self) -> None:
        p = self.embedder.provenance
        await self.vectors.open(p.dimension, p.fingerprint)

    def request(self, memory_id: str, content: str, **fields: Any) -> Envelope[Any]:
        self.clock += timedelta(seconds=1)
        payload = MemoryWriteRequested(
            memory_id=memory_id, agent_id=fields.pop("agent_id", "a1"), content=content, **fields
        )
        return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id="t1", occurred_at=self.clock)

    async def write(self, event: Envelope[Any]) -> list[Envelope[Any]]:
        """Run the write through embedding and storage; return everything published."""
        published = await self.handlers.on_write_requested(event)
        out = list(published)
        for requested in [e for e in published if e.event_type == "embedding.requested"]:
            for computed in await self.embedding.on_requested(requested):
                out += await self.handlers.on_computed(computed)
        return out


def _types(events: object) -> list[str]:
    assert isinstance(events, list)
    return [e.event_type for e in events]


@pytest.mark.parametrize("content", ["", "   ", "\n\t  ", "x"])
async def test_invalid_content_is_rejected_before_any_embedding(content: str) -> None:
    pipe = Pipeline()
    await pipe.open()
    published = await pipe.write(pipe.request("m1", content))
    assert _types(published) == ["memory.rejected"]
    assert pipe.embedder.calls == 0
    row = await pipe.rows.get("t1", "m1")
    assert row is not None and row.status == "rejected" and row.content is None


async def test_valid_content_is_embedded_once_and_stored_with_embedder_provenance() -> None:
    pipe = Pipeline()
    await pipe.open()
    published = await pipe.write(pipe.request("m1", "the user likes tea"))
    assert _types(published) == ["embedding.requested", "memory.stored"]
    assert pipe.embedder.calls == 1
    row = await pipe.rows.get("t1", "m1")
    assert row is not None and row.status == "active"
    assert row.provenance == {
        **pipe.embedder.provenance.model_dump(),
        "fingerprint": pipe.embedder.provenance.fingerprint,
    }
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 1


async def test_an_imported_vector_of_this_embedder_is_kept_and_another_embedders_is_not() -> None:
    pipe = Pipeline()
    await pipe.open()
    p = pipe.embedder.provenance
    vector = [1.0] + [0.0] * (p.dimension - 1)
    made = VectorProvenance.model_validate({**p.model_dump(), "fingerprint": p.fingerprint})
    carried = pipe.request("m1", "the user likes tea", vector=vector, vector_provenance=made)
    [computed] = await pipe.handlers.on_write_requested(carried)
    assert computed.event_type == "embedding.computed"
    assert _types(await pipe.handlers.on_computed(computed)) == ["memory.stored"]
    assert pipe.embedder.calls == 0
    stored = await pipe.store.get("memories", [point_id("t1", "m1")])
    assert list(stored[0].vector) == vector
    other = made.model_copy(update={"fingerprint": "0" * 64})
    elsewhere = pipe.request("m2", "the user likes coffee", vector=vector, vector_provenance=other)
    assert _types(await pipe.write(elsewhere)) == ["embedding.requested", "memory.stored"]
    assert pipe.embedder.calls == 1


async def test_a_replayed_write_or_result_duplicates_nothing() -> None:
    pipe = Pipeline()
    await pipe.open()
    event = pipe.request("m1", "the user likes tea")
    [requested] = await pipe.handlers.on_write_requested(event)
    [computed] = await pipe.embedding.on_requested(requested)
    first = await pipe.handlers.on_computed(computed)
    [asked_again] = await pipe.handlers.on_write_requested(event)
    assert asked_again.event_id == requested.event_id, "the same request, staged again"
    again = await pipe.handlers.on_computed(computed)
    assert _types(first) == ["memory.stored"]
    assert [e.event_id for e in again] == [e.event_id for e in first], "the same event, again"
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 1
    assert len(pipe.rows.rows) == 1


async def test_a_retry_of_a_pending_write_is_stored_and_announced_once() -> None:
    pipe = Pipeline()
    await pipe.open()
    [first] = await pipe.handlers.on_write_requested(pipe.request("m1", "the user likes tea"))
    [retry] = await pipe.handlers.on_write_requested(pipe.request("m1", "the user likes tea"))
    assert retry.event_id != first.event_id, "a new write event asks again while pending"
    [computed] = await pipe.embedding.on_requested(first)
    [computed_again] = await pipe.embedding.on_requested(retry)
    assert _types(await pipe.handlers.on_computed(computed)) == ["memory.stored"]
    assert await pipe.handlers.on_computed(computed_again) == [], "the retry's answer: nothing"
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 1


async def test_a_replay_of_a_still_pending_write_stages_the_same_embedding_request() -> None:
    pipe = Pipeline()
    await pipe.open()
    event = pipe.request("m1", "the user likes tea")
    [requested] = await pipe.handlers.on_write_requested(event)
    [again] = await pipe.handlers.on_write_requested(event)
    assert again.event_id == requested.event_id
    row = await pipe.rows.get("t1", "m1")
    assert row is not None and row.status == "pending"


async def test_supersession_keeps_the_old_memory_out_of_default_recall() -> None:
    pipe = Pipeline()
    await pipe.open()
    await pipe.write(pipe.request("old", "the office is in Paris"))
    await pipe.write(pipe.request("new", "the office moved to Lyon", supersedes="old"))
    old = await pipe.rows.get("t1", "old")
    assert old is not None and old.status == "superseded" and old.superseded_by == "new"
    assert await pipe.store.count("memories", {"status": "active"}) == 1
    assert await pipe.store.count("memories", {"status": "superseded"}) == 1


async def test_retention_counts_and_evicts_one_population_with_one_filter() -> None:
    pipe = Pipeline([RetentionPolicy(type="conversation", max_count=2)])
    await pipe.open()
    for n in range(4):
        await pipe.write(pipe.request(f"c{n}", f"chat number {n}", type="conversation"))
        await pipe.write(pipe.request(f"f{n}", f"fact number {n}", type="fact"))
    selection = RetentionPolicy(type="conversation", max_count=2).selection("t1", "a1")
    assert pipe.rows.counted and pipe.rows.selected
    assert all(used == selection for used in pipe.rows.counted + pipe.rows.selected)
    assert await pipe.rows.count(selection) == 2
    assert await pipe.vectors.count(selection) == 2
    facts = RetentionPolicy(type="fact", max_count=1).selection("t1", "a1")
    assert await pipe.rows.count(facts) == 4 and await pipe.vectors.count(facts) == 4
    gone = [r["memory_id"] for r in pipe.rows.rows.values() if r["status"] == "withdrawn"]
    assert sorted(gone) == ["c0", "c1"]


async def test_an_agents_own_rule_wins_over_the_default_over_one_population() -> None:
    pipe = Pipeline([RetentionPolicy(type="conversation", max_count=3)])
    await pipe.open()
    own = AgentRetention(rules=[RetentionRule(type="conversation", max_count=1)])
    shown = await pipe.retention.set_rules("t1", "a1", own)
    assert shown["rules"] == [{"type": "conversation", "max_count": 1, "max_age_seconds": None}]
    assert shown["defaults"] == []
    for n in range(3):
        await pipe.write(pipe.request(f"c{n}", f"chat number {n}", type="conversation"))
    selection = RetentionPolicy(type="conversation", max_count=1).selection("t1", "a1")
    assert all(used == selection for used in pipe.rows.counted + pipe.rows.selected)
    assert await pipe.rows.count(selection) == 1 and await pipe.vectors.count(selection) == 1
    gone = sorted(r["memory_id"] for r in pipe.rows.rows.values() if r["status"] == "withdrawn")
    assert gone == ["c0", "c1"]
    assert pipe.rules.reads == 2, "set_rules shows what is in force, then one read is cached"
    cleared = await pipe.retention.set_rules("t1", "a1", AgentRetention(rules=[]))
    assert cleared["rules"] == []
    assert cleared["defaults"] == [
        {"type": "conversation", "max_count": 3, "max_age_seconds": None}
    ]


async def test_a_memory_expired_but_not_yet_swept_is_no_member_of_the_population() -> None:
    pipe = Pipeline([RetentionPolicy(type="conversation", max_count=2)])
    await pipe.open()
    await pipe.write(pipe.request("c0", "chat number 0", type="conversation"))
    await pipe.write(pipe.request("c1", "chat number 1", type="conversation"))
    lapsed = datetime.now(UTC) - timedelta(seconds=1)
    await pipe.write(pipe.request("c2", "chat number 2", type="conversation", expires_at=lapsed))
    statuses = {r["memory_id"]: r["status"] for r in pipe.rows.rows.values()}
    assert statuses == {"c0": "active", "c1": "active", "c2": "active"}


async def test_a_deleted_agent_loses_its_memories_and_its_own_retention_rules() -> None:
    pipe = Pipeline()
    await pipe.open()
    await pipe.write(pipe.request("m1", "a memory of the agent"))
    own = AgentRetention(rules=[RetentionRule(type="conversation", max_count=5)])
    await pipe.retention.set_rules("t1", "a1", own)
    gone = new_event(AGENT_DELETED, AgentDeleted(agent_id="a1"), tenant_id="t1")
    published = await pipe.handlers.on_agent_deleted(gone)
    assert _types(published) == ["memory.withdrawn"]
    assert pipe.rules.rules == {}


async def test_a_tombstoned_record_withdraws_derived_memories_and_acknowledges() -> None:
    pipe = Pipeline()
    await pipe.open()
    await pipe.write(pipe.request("m1", "derived from r1", derived_from=["rec-1"]))
    await pipe.write(pipe.request("m2", "unrelated memory"))
    tomb = RecordTombstoned(
        record_id="rec-1",
        reason="prune",
        prune_job_id="prj_1",
        content_sha256="0" * 64,
        last_revision=1,
    )
    event = new_event(RECORD_TOMBSTONED, tomb, tenant_id="t1")
    published = await pipe.handlers.on_record_tombstoned(event)
    assert _types(published) == ["memory.withdrawn", "tombstone.applied"]
    ack = published[-1].payload
    assert ack.source_ids == ["rec-1"] and ack.tombstoned_ids == ["m1"]
    assert ack.counts == {"memories": 1, "vectors": 1}
    row = await pipe.rows.get("t1", "m1")
    assert row is not None and row.status == "withdrawn" and row.content is None
    assert row.content_sha256
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 1


def _tombstoned(record_id: str, job: str = "prj_1") -> Envelope[Any]:
    tomb = RecordTombstoned(
        record_id=record_id,
        reason="prune",
        prune_job_id=job,
        content_sha256="0" * 64,
        last_revision=1,
    )
    return new_event(RECORD_TOMBSTONED, tomb, tenant_id="t1")


def _acks(answers: Sequence[object]) -> list[tuple[list[str], list[str]]]:
    return [
        (e.payload.source_ids, e.payload.tombstoned_ids)
        for answer in answers
        if isinstance(answer, list)
        for e in answer
        if e.event_type == "tombstone.applied"
    ]


def _because(answer: object) -> list[tuple[str, str | None]]:
    """Which memory each withdrawal took, and the source that took it."""
    assert isinstance(answer, list)
    return [
        (e.payload.memory_id, e.payload.because_of)
        for e in answer
        if e.event_type == "memory.withdrawn"
    ]


async def test_a_batch_of_tombstones_answers_each_input_as_if_handled_in_turn() -> None:
    pipe = Pipeline()
    await pipe.open()
    await pipe.write(pipe.request("shared", "from r1 and r2", derived_from=["rec-1", "rec-2"]))
    await pipe.write(pipe.request("only2", "from r2", derived_from=["rec-2"]))
    await pipe.write(pipe.request("kept", "from r9", derived_from=["rec-9"]))
    answers = await pipe.handlers.on_records_tombstoned(
        [_tombstoned("rec-1"), _tombstoned("rec-2"), _tombstoned("rec-3")]
    )
    assert [_types(a) for a in answers] == [
        ["memory.withdrawn"],
        ["memory.withdrawn"],
        ["tombstone.applied"],
    ], "one acknowledgement for the job, with the last input"
    assert [_because(a) for a in answers] == [[("shared", "rec-1")], [("only2", "rec-2")], []]
    assert _acks(answers) == [(["rec-1", "rec-2", "rec-3"], ["shared", "only2"])]
    statuses = {r["memory_id"]: r["status"] for r in pipe.rows.rows.values()}
    assert statuses == {"shared": "withdrawn", "only2": "withdrawn", "kept": "active"}
    because = {r["memory_id"]: r.get("withdrawn_because_of") for r in pipe.rows.rows.values()}
    assert because == {"shared": "rec-1", "only2": "rec-2", "kept": None}, "each row its own"
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 1


async def test_with_every_source_required_a_memory_goes_with_its_last_source_in_a_batch() -> None:
    pipe = Pipeline(require_all=True)
    await pipe.open()
    await pipe.write(pipe.request("both", "from r1 and r2", derived_from=["rec-1", "rec-2"]))
    answers = await pipe.handlers.on_records_tombstoned(
        [_tombstoned("rec-1"), _tombstoned("rec-2")]
    )
    assert [_because(a) for a in answers] == [[], [("both", "rec-2")]]
    assert _acks(answers) == [(["rec-1", "rec-2"], ["both"])]
    assert pipe.rows.rows["t1:both"]["status"] == "withdrawn"


async def test_a_batch_of_writes_answers_each_input_as_if_handled_in_turn() -> None:
    pipe = Pipeline()
    await pipe.open()
    await pipe.handlers.on_records_tombstoned([_tombstoned("rec-gone")])
    replayed = pipe.request("again", "written before")
    [first_request] = await pipe.handlers.on_write_requested(replayed)
    batch = [
        pipe.request("ok", "the user likes tea", derived_from=["rec-1"]),
        pipe.request("blank", "   "),
        pipe.request("orphan", "from a pruned record", derived_from=["rec-gone"]),
        replayed,
    ]
    answers = await pipe.handlers.on_writes_requested(batch)
    assert [_types(a) for a in answers] == [
        ["embedding.requested"],
        ["memory.rejected"],
        ["memory.withdrawn"],
        ["embedding.requested"],
    ]
    assert answers[3][0].event_id == first_request.event_id
    assert pipe.rows.sources[("t1", "rec-1")] == {"ok"}
    again = await pipe.handlers.on_writes_requested(batch[:3])
    ids = [[e.event_id for e in a] for a in again]
    assert ids == [[e.event_id for e in a] for a in answers[:3]], "a replay stages the same"
    assert pipe.embedder.calls == 0


async def test_a_batch_of_results_stores_each_memory_once_and_supersedes_in_order() -> None:
    pipe = Pipeline()
    await pipe.open()
    writes = [
        pipe.request("old", "the office is in Paris"),
        pipe.request("new", "the office moved to Lyon", supersedes="old"),
        pipe.request("tea", "the user likes tea"),
    ]
    requested = [(await pipe.handlers.on_write_requested(w))[0] for w in writes]
    computed = await pipe.embedding.on_requested_many(requested)
    results = [answer[0] for answer in computed]  # type: ignore[index]
    answers = await pipe.handlers.on_computed_many([results[1], results[0], results[2]])
    assert [_types(a) for a in answers] == [["memory.stored"]] * 3
    statuses = {r["memory_id"]: r["status"] for r in pipe.rows.rows.values()}
    assert statuses == {"old": "superseded", "new": "active", "tea": "active"}
    assert await pipe.store.count("memories", {"status": "active"}) == 2
    assert await pipe.store.count("memories", {"status": "superseded"}) == 1
    replayed = await pipe.handlers.on_computed_many(results)
    assert {e.event_id for a in replayed for e in a} == {e.event_id for a in answers for e in a}
    assert await pipe.store.count("memories", {"status": "superseded"}) == 1


async def test_the_same_content_in_the_same_scope_is_stored_once() -> None:
    pipe = Pipeline()
    await pipe.open()
    first = await pipe.write(pipe.request("m1", "Order ORD-48213 ships Friday", user_id="u1"))
    again = await pipe.write(pipe.request("m2", "  order ord-48213   ships friday ", user_id="u1"))
    assert _types(first) == ["embedding.requested", "memory.stored"]
    assert _types(again) == ["memory.rejected"]
    assert again[0].payload.reason == "duplicate" and again[0].payload.duplicate_of == "m1"
    row = await pipe.rows.get("t1", "m2")
    assert row is not None and row.status == "rejected" and row.content is None
    assert await pipe.store.count("memories", {"tenant_id": "t1"}) == 1


async def test_dedup_respects_scope_opt_out_and_lets_go_once_the_holder_is_gone() -> None:
    pipe = Pipeline()
    await pipe.open()
    await pipe.write(pipe.request("m1", "likes green tea", user_id="u1"))
    other_user = await pipe.write(pipe.request("m2", "likes green tea", user_id="u2"))
    other_session = await pipe.write(
        pipe.request("m3", "likes green tea", user_id="u1", session_id="s1")
    )
    opted_out = await pipe.write(
        pipe.request("m4", "likes green tea", user_id="u1", allow_duplicate=True)
    )
    assert [_types(x)[-1] for x in (other_user, other_session, opted_out)] == ["memory.stored"] * 3
    replacing = await pipe.write(
        pipe.request("m5", "likes green tea", user_id="u1", supersedes="m1")
    )
    assert _types(replacing)[-1] == "memory.stored"
    assert getattr(await pipe.rows.get("t1", "m1"), "status", None) == "superseded"
    after = await pipe.write(pipe.request("m6", "likes green tea", user_id="u1"))
    assert after[0].payload.duplicate_of == "m5"


async def test_identical_writes_in_one_batch_leave_one_live_memory() -> None:
    pipe = Pipeline()
    await pipe.open()
    batch = [pipe.request(f"m{n}", "the dock closes at 14:00") for n in range(5)]
    answers = await pipe.handlers.on_writes_requested(batch)
    assert [_types(a) for a in answers] == [["embedding.requested"]] + [["memory.rejected"]] * 4
    assert {a[0].payload.duplicate_of for a in answers[1:]} == {"m0"}
    again = await pipe.handlers.on_writes_requested(batch)
    assert [[e.event_id for e in a] for a in again] == [[e.event_id for e in a] for a in answers]
    live = [r for r in pipe.rows.rows.values() if r["status"] in ("pending", "active")]
    assert [r["memory_id"] for r in live] == ["m0"]


async def test_a_collection_without_lexical_vectors_is_refused_at_open() -> None:
    store = ExactNumpyStore()
    await MemoryVectors(store, "memories", lexical=False).open(32, "fp")
    with pytest.raises(LexicalMismatch) as refused:
        await MemoryVectors(store, "memories").open(32, "fp")
    assert refused.value.stored is None and refused.value.asked == LEXICAL_ENCODER
    assert await MemoryVectors(store, "memories", lexical=False).open(32, "other") == "fp"


async def test_a_collection_built_with_lexical_v1_opens_and_answers_with_v1() -> None:
    """Memories written before v2 are still found: the service encodes with the stored v1."""
    pipe = Pipeline()
    p = pipe.embedder.provenance
    await pipe.store.ensure_collection("memories", p.dimension, p.fingerprint, lexical=V1.id)
    await pipe.open()
    assert pipe.vectors.lexical == V1.id
    content = "Order ORD-48213 was delayed at customs"
    await pipe.write(pipe.request("m1", content))
    await pipe.write(pipe.request("m2", "the office moved to Lyon"))
    [point] = await pipe.store.get("memories", ["t1:m1"])
    assert point.sparse is not None
    assert point.sparse.indices == document_vector(content, V1.id).indices
    assert point.sparse.indices != document_vector(content, V2.id).indices
    recall = Recall(pipe.embedder, pipe.vectors)
    answer = await recall.recall("t1", "a1", "delayed ORD-48213", 5, mode="lexical", min_score=0)
    assert [r["memory_id"] for r in answer.results][:1] == ["m1"]
    assert (await pipe.store.collection_info("memories")).lexical == V1.id


async def test_a_new_collection_is_built_with_the_current_lexical_encoder() -> None:
    pipe = Pipeline()
    await pipe.open()
    assert pipe.vectors.lexical == LEXICAL_ENCODER == V2.id
    assert (await pipe.store.collection_info("memories")).lexical == V2.id


async def test_a_collection_of_an_unknown_lexical_encoder_is_still_refused() -> None:
    pipe = Pipeline()
    p = pipe.embedder.provenance
    await pipe.store.ensure_collection("memories", p.dimension, p.fingerprint, lexical="bm25-x")
    with pytest.raises(LexicalMismatch) as refused:
        await pipe.open()
    assert refused.value.stored == "bm25-x" and refused.value.asked == LEXICAL_ENCODER


async def test_a_retried_original_after_a_duplicate_in_one_batch_keeps_its_slot() -> None:
    pipe = Pipeline()
    await pipe.open()
    original = pipe.request("m1", "the dock closes at 14:00")
    [requested, _] = await pipe.write(original)
    answers = await pipe.handlers.on_writes_requested(
        [pipe.request("m2", "The dock closes at 14:00"), original]
    )
    assert _types(answers[0]) == ["memory.rejected"]
    assert [e.event_id for e in answers[1]] == [requested.event_id], "the original's own request"
    assert answers[0][0].payload.duplicate_of == "m1"
    live = [r["memory_id"] for r in pipe.rows.rows.values() if r["status"] == "active"]
    assert live == ["m1"]


async def test_a_dead_lettered_write_ends_rejected_with_ids_and_the_reason_only() -> None:
    pipeline = Pipeline()
    await pipeline.open()
    event = pipeline.request("m1", "private words", metadata={"topic": "private"}, user_id="u1")
    published = await pipeline.handlers.on_write_dead_lettered(event, refused_write(event))
    row = pipeline.rows.rows["t1:m1"]
    assert row["status"] == "rejected" and row["agent_id"] == "a1" and row["user_id"] == "u1"
    assert row["reason"] == "dead_lettered: BulkWriteError: write error codes 2"
    assert "content" not in row and "metadata" not in row and "metadata_at" not in row
    assert _types(published) == ["memory.rejected"]
    again = await pipeline.handlers.on_write_dead_lettered(event, refused_write(event))
    assert [e.event_id for e in again] == [e.event_id for e in published]
    assert pipeline.rows.rows["t1:m1"] == row


async def test_a_dead_lettered_pending_write_loses_its_content_but_a_stored_one_stays() -> None:
    pipeline = Pipeline()
    await pipeline.open()
    pending = pipeline.request("m1", "still pending words")
    await pipeline.handlers.on_write_requested(pending)
    await pipeline.handlers.on_write_dead_lettered(pending, refused_write(pending))
    row = pipeline.rows.rows["t1:m1"]
    assert row["status"] == "rejected" and "content" not in row
    stored = pipeline.request("m2", "stored words")
    await pipeline.write(stored)
    assert await pipeline.handlers.on_write_dead_lettered(stored, refused_write(stored)) == []
    assert pipeline.rows.rows["t1:m2"]["status"] == "active"


async def test_vectors_that_could_not_be_stored_leave_their_memories_rejected() -> None:
    pipeline = Pipeline()
    await pipeline.open()
    event = pipeline.request("m1", "words whose vector never lands")
    requested = await pipeline.handlers.on_write_requested(event)
    (computed,) = await pipeline.embedding.on_requested(requested[0])
    published = await pipeline.handlers.on_computed_dead_lettered(computed, refused_write(computed))
    row = pipeline.rows.rows["t1:m1"]
    assert row["status"] == "rejected" and "content" not in row
    assert row["reason"] == "dead_lettered: BulkWriteError: write error codes 2"
    assert _types(published) == ["memory.rejected"]
    again = await pipeline.handlers.on_computed_dead_lettered(computed, refused_write(computed))
    assert [e.event_id for e in again] == [e.event_id for e in published], "the same, again"


async def test_a_replayed_letter_writes_the_memory_a_dead_letter_left_rejected() -> None:
    pipeline = Pipeline()
    await pipeline.open()
    event = pipeline.request("m1", "words a passing bug once refused")
    await pipeline.handlers.on_write_dead_lettered(event, refused_write(event))
    published = await pipeline.write(event)
    assert "memory.stored" in _types(published)
    row = pipeline.rows.rows["t1:m1"]
    assert row["status"] == "active" and row["content"] == "words a passing bug once refused"
    assert "reason" not in row


async def test_a_replayed_write_rejected_for_its_content_says_so_again() -> None:
    pipeline = Pipeline()
    await pipeline.open()
    event = pipeline.request("m1", "x")
    [first] = await pipeline.write(event)
    [again] = await pipeline.write(event)
    assert (again.event_type, again.event_id) == ("memory.rejected", first.event_id)
    assert pipeline.rows.rows["t1:m1"]["status"] == "rejected"


class ReadCountingRows(FakeRows):
    """FakeRows that notes the ids each `get_many` asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[list[str]] = []

    async def get_many(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, MemoryRow]:
        self.reads.append(list(memory_ids))
        return await super().get_many(tenant_id, memory_ids)


async def test_new_content_reads_no_row_for_the_slots_it_just_claimed() -> None:
    rows, slots = ReadCountingRows(), FakeSlots()
    dedup = Dedup(slots, rows)
    first: list[tuple[dict[str, Any], MemoryWriteRequested]] = [
        ({}, MemoryWriteRequested(memory_id=f"m{n}", agent_id="a1", content=f"fact {n}"))
        for n in range(3)
    ]
    assert await dedup.duplicates("t1", first) == {}
    assert [ids for ids in rows.reads if ids] == [], "every slot was free: nothing to read"
    again: list[tuple[dict[str, Any], MemoryWriteRequested]] = [
        ({}, MemoryWriteRequested(memory_id="m9", agent_id="a1", content="fact 1"))
    ]
    await dedup.duplicates("t1", again)
    assert [ids for ids in rows.reads if ids] == [["m1"]], "a slot held before is read"


async def test_a_slot_held_by_a_write_whose_row_is_not_written_yet_is_in_flight() -> None:
    rows, slots = ReadCountingRows(), FakeSlots()
    dedup = Dedup(slots, rows)
    first = MemoryWriteRequested(memory_id="m1", agent_id="a1", content="the gate code is 4411")
    assert await dedup.duplicates("t1", [({}, first)]) == {}
    later = MemoryWriteRequested(memory_id="m2", agent_id="a1", content="The gate code is 4411")
    assert await dedup.duplicates("t1", [({}, later)]) == {"m2": "m1"}
    assert rows.reads[-1] == ["m1"], "the holder's row is read: not there yet, so in flight"


async def test_recall_embeds_the_query_as_a_query_and_memories_as_documents() -> None:
    """Asymmetric models (bge) put their instruction on queries only: the port says which."""
    pipe = Pipeline()
    await pipe.open()
    await pipe.write(pipe.request("m1", "the office moved to Lyon"))
    recall = Recall(pipe.embedder, pipe.vectors)
    await recall.recall("t1", "a1", "where is the office", 5, mode="dense", min_score=0)
    assert pipe.embedder.queries == ["where is the office"]
    assert "the office moved to Lyon" in pipe.embedder.texts
    assert "the office moved to Lyon" not in pipe.embedder.queries
