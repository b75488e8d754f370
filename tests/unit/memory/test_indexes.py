"""Every query the memory stores make is served by a declared index and names the tenant, and
the agent wherever a query selects memories by anything but `_id`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram_embedders.moving import ReindexDocument
from engram_embedders.reindex import Reindex, Space
from engram_events.memory_filter import MemoryFilter
from engram_events.retention import AgentRetention, RetentionRule
from engram_memory.adapters.conversations import CONVERSATIONS, ConversationStore
from engram_memory.adapters.dedup import SLOTS, DedupSlots
from engram_memory.adapters.reindex import REINDEX, STORE, ReindexStore
from engram_memory.adapters.retention import RETENTION, RetentionRules
from engram_memory.adapters.rows import INDEXES, MEMORIES, MemoryRows
from engram_memory.domain.conversation_records import ConversationRecord
from engram_memory.domain.listing import Position
from engram_memory.domain.retention import RetentionPolicy
from engram_memory.domain.selection import Selection
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

T = "ten_a"
AT = datetime(2026, 12, 1, tzinfo=UTC)
ROW = {
    "_id": f"{T}:m1",
    "tenant_id": T,
    "memory_id": "m1",
    "agent_id": "a1",
    "status": "active",
    "type": "fact",
    "content_sha256": "0" * 64,
    "derived_from": ["r1"],
    "created_at": AT,
}
OPENED = {
    name: value for name, value in ROW.items() if name not in ("_id", "tenant_id", "status")
} | {"memory_id": "m3"}
CONVERSATION = ConversationRecord(T, "c1", "a1", "processed", "messages")
WIDE = Selection(
    T,
    ("a1", "a2"),
    statuses=("active",),
    types=("fact",),
    filter=MemoryFilter(
        user_id="u1",
        session_id="s1",
        metadata={"lang": "en", "at": {"gte": "2026-01-01T00:00:00Z"}, "x": {"exists": True}},
    ),
    search="ord-1",
)
ONE = Selection.of_agent(T, "a1")
NOW_READ = Selection(T, ("a1",), statuses=("active", "expired", "withdrawn"), at=AT)
"""Statuses read at an instant: a lapsed live row counts as `expired`."""

UNINDEXED = {
    ("ReindexStore.stored_between", MEMORIES): "once per reindex, before its switch: the rows "
    "stored around its start, walked in `_id` order",
    ("ReindexStore.count_live", MEMORIES): "once per reindex, at its start",
    ("MemoryRows.count_derived_from", MEMORIES): "on the local server, whose indexes serve no "
    "equality on `derived_from`, prune verification reads the tenant's rows in these statuses "
    "once and matches their sources here",
}
JOB = Reindex(Space("memories", "minilm"), Space("memories-x", "bge-small"), "fp", AT)
WALK = "a reindex moves the collection every tenant shares, so it walks every tenant's rows"
TENANT_FREE = {
    ("ReindexStore.page", MEMORIES): WALK,
    ("ReindexStore.stored_between", MEMORIES): WALK,
    ("ReindexStore.by_keys", MEMORIES): WALK + " (by `_id`, each naming its tenant)",
    ("ReindexStore.count_live", MEMORIES): WALK,
    ("ReindexDocument.load", REINDEX): "one document for the whole store",
    ("ReindexDocument.save", REINDEX): "one document for the whole store",
    ("ReindexDocument.switch", REINDEX): "one document for the whole store",
    ("MemoryRows.lapsed", MEMORIES): "the expiry sweeper walks every tenant's lapsed memories "
    "through the `expires_at` index, and marks each under its own tenant",
}
AGENT_FREE = {
    ("ReindexStore.page", MEMORIES): "every agent's, as every tenant's",
    ("ReindexStore.stored_between", MEMORIES): "every agent's, as every tenant's",
    ("ReindexStore.count_live", MEMORIES): "every agent's, as every tenant's",
    ("MemoryRows.lapsed", MEMORIES): "as the tenant, every agent's",
    ("MemoryRows.derived_from_any", MEMORIES): "a source (record, fact, document) is the tenant's, "
    "and memories of any of its agents may derive from it",
    ("MemoryRows.derived_via_index", MEMORIES): "as `derived_from_any`, where MongoDB's index "
    "serves it",
    ("MemoryRows.count_derived_from", MEMORIES): "as `derived_from_any`",
}


async def test_memory_queries_are_indexed_and_scoped() -> None:
    db = RecordingDatabase(
        {
            MEMORIES: [ROW],
            SLOTS: [{"_id": f"{T}:dedup:k", "memory_id": "m1"}],
            CONVERSATIONS: [
                {
                    "_id": f"{T}:c1",
                    "tenant_id": T,
                    "conversation_id": "c1",
                    "agent_id": "a1",
                    "status": "processed",
                }
            ],
            RETENTION: [],
            REINDEX: [],
        }
    )
    rows = MemoryRows(db)
    kept = MemoryRows(db, source_index=True)
    slots = DedupSlots(db)
    conversations = ConversationStore(db)
    rules = RetentionRules(db)
    reindex = ReindexStore(db)
    document = ReindexDocument(db, REINDEX, STORE)
    own = AgentRetention(rules=[RetentionRule(type="fact", max_count=3)])
    policy = RetentionPolicy(type="fact", max_count=10)
    exercise = {
        "MemoryRows.get": lambda: rows.get(T, "m1"),
        "MemoryRows.get_many": lambda: rows.get_many(T, ["m1", "m2"]),
        "MemoryRows.owners": lambda: rows.owners(T, ["m1", "m2"]),
        "MemoryRows.set_fields": lambda: rows.set_fields(T, "m1", {"status": "active"}),
        "MemoryRows.set_fields_many": lambda: rows.set_fields_many(T, [("m1", {"a": 1})]),
        "MemoryRows.set_pending": lambda: rows.set_pending(T, ["m1"], {"status": "active"}),
        "MemoryRows.supersede": lambda: rows.supersede(
            T, "m1", agent_id="a1", by="m2", held="active"
        ),
        "MemoryRows.open_many": lambda: rows.open_many(T, [(OPENED, "pending")]),
        "MemoryRows.mark_dead_lettered": lambda: rows.mark_dead_lettered(
            T, {**OPENED, "memory_id": "m1", "reason": "dead_lettered: x", "dead_lettered_at": AT}
        ),
        "MemoryRows.reopen_dead_lettered": lambda: rows.reopen_dead_lettered(
            T, [({**OPENED, "memory_id": "m1"}, "pending")]
        ),
        "MemoryRows.count": lambda: rows.count(policy.selection(T, "a1")),
        "MemoryRows.select": lambda: rows.select(policy.selection(T, "a1")),
        "MemoryRows.page": lambda: rows.page(WIDE, "recent", Position(AT, "m1"), 10),
        "MemoryRows.tally": lambda: rows.tally(WIDE),
        "MemoryRows.select_by": lambda: rows.select_by(ONE),
        "MemoryRows.lapsed": lambda: rows.lapsed(AT, 100),
        "MemoryRows.index_sources": lambda: kept.index_sources(T, "m1", ["r1"]),
        "MemoryRows.index_sources_many": lambda: kept.index_sources_many(T, [("m1", ["r1"])]),
        "MemoryRows.derived_from_any": lambda: rows.derived_from_any(T, ["r1"], ["active"]),
        "MemoryRows.derived_via_index": lambda: rows.derived_via_index(T, ["r1"], ["active"]),
        "MemoryRows.count_derived_from": lambda: rows.count_derived_from(
            T, {"records": ["r1"]}, ["active"]
        ),
        "MemoryRows.successors": lambda: rows.successors(T, "a1", "m1", AT),
        "MemoryRows.mark_gone": lambda: rows.mark_gone(T, ["r1"]),
        "MemoryRows.gone": lambda: rows.gone(T, ["r1"]),
        "DedupSlots.holders": lambda: slots.holders(T, ["k"]),
        "DedupSlots.claim": lambda: slots.claim(T, [("k", "m1")]),
        "DedupSlots.hand_over": lambda: slots.hand_over(T, "k", "m0", "m1"),
        "ConversationStore.get": lambda: conversations.get(T, "c1"),
        "ConversationStore.owners": lambda: conversations.owners(T, ["c1", "c2"]),
        "ConversationStore.open": lambda: conversations.open(CONVERSATION),
        "ConversationStore.save_facts": lambda: conversations.save_facts(T, "c1", [], 1),
        "ConversationStore.settle": lambda: conversations.settle(T, "c1", "processed"),
        "ConversationStore.count_attempt": lambda: conversations.count_attempt(T, "c1"),
        "ConversationStore.mark_failed": lambda: conversations.mark_failed(
            CONVERSATION, "dead_lettered: x"
        ),
        "ConversationStore.mark_deleted": lambda: conversations.mark_deleted(T, "a1", "c1", None),
        "RetentionRules.put": lambda: rules.put(T, "a1", own),
        "RetentionRules.get": lambda: rules.get(T, "a1"),
        "RetentionRules.forget": lambda: rules.forget(T, "a1"),
        "ReindexDocument.load": lambda: document.load(),
        "ReindexDocument.save": lambda: document.save(JOB),
        "ReindexDocument.switch": lambda: document.switch(JOB),
        "ReindexStore.page": lambda: reindex.page(f"{T}:m0", 10),
        "ReindexStore.stored_between": lambda: reindex.stored_between(AT, AT, f"{T}:m0", 10),
        "ReindexStore.by_keys": lambda: reindex.by_keys([f"{T}:m1"]),
        "ReindexStore.count_live": lambda: reindex.count_live(),
    }
    other_shapes = {
        "MemoryRows.page": lambda: rows.page(ONE, "oldest", None, 10),
        "MemoryRows.tally": lambda: rows.tally(NOW_READ),
        "MemoryRows.count_derived_from": lambda: kept.count_derived_from(
            T, {"records": ["r1"]}, ["active"]
        ),
        "MemoryRows.derived_via_index": lambda: kept.derived_via_index(T, ["r1"], ["active"]),
    }
    await db.run(other_shapes)
    await db.run(exercise)
    verdict = judge(
        db.calls,
        INDEXES,
        tenant_id=T,
        unindexed=UNINDEXED,
        tenant_free=TENANT_FREE,
        scope_fields={MEMORIES: "agent_id"},
        scope_free=AGENT_FREE,
    )
    assert not verdict.report(), verdict.report()
    stores = (MemoryRows, DedupSlots, ConversationStore, RetentionRules, ReindexStore)
    assert public_methods(*stores, ReindexDocument) == set(exercise)
