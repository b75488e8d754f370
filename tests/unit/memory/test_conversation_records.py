"""A conversation record crosses the store as typed entries: what is stored reads back the same,
a decision's fields sit flat beside its fact, and a deletion keeps no text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram_memory.adapters.conversations import conversation_doc, conversation_record
from engram_memory.domain.conversation_records import (
    ConversationRecord,
    Extraction,
    FactDecision,
    FactEntry,
    MessageEntry,
)

pytestmark = pytest.mark.unit

AT = datetime(2026, 12, 7, 9, 30, tzinfo=UTC)
RECORD = ConversationRecord(
    tenant_id="tnt_a",
    conversation_id="conv_1",
    agent_id="agt_1",
    status="processed",
    mode="model",
    messages=(
        MessageEntry(0, "system", 3, "ab" * 32, "Hi.", at=AT),
        MessageEntry(1, "user", 14, "cd" * 32, "I live in Riga", name="ana", memory_id="mem_1"),
        MessageEntry(2, "tool", 0),
    ),
    facts=(
        FactEntry(0, "ef" * 32, "mem_f0", "lives in Riga", None),
        FactEntry(
            1,
            "01" * 32,
            "mem_f1",
            "likes tea",
            FactDecision("supersede", True, ("mem_old",), "m", "02" * 32, supersedes="mem_old"),
        ),
        FactEntry(2, "03" * 32, "mem_f2", "x", FactDecision("add", False, (), "m", "04" * 32)),
    ),
    user_id="u1",
    metadata={"channel": "web"},
    model_calls=2,
    extraction=Extraction("m", "05" * 32),
)


def test_a_stored_record_reads_back_as_it_was_written() -> None:
    assert conversation_record(conversation_doc(RECORD)) == RECORD


def test_a_decision_is_stored_flat_beside_its_fact_and_an_undecided_fact_says_so() -> None:
    undecided, superseding, added = conversation_doc(RECORD)["facts"]
    assert undecided["decision"] is None and "model" not in undecided
    assert superseding["decision"] == "supersede" and superseding["supersedes"] == "mem_old"
    assert superseding["candidates"] == ["mem_old"] and superseding["asked"] is True
    assert added["candidates"] == [] and "known_as" not in added


def test_a_record_without_its_texts_keeps_ids_hashes_and_decisions() -> None:
    kept = RECORD.without_texts()
    assert all(m.content is None for m in kept.messages)
    assert all(f.content is None for f in kept.facts or ())
    assert [f.decision for f in kept.facts or ()] == [f.decision for f in RECORD.facts or ()]
    assert kept.metadata == {} and kept.memory_ids() == ["mem_f1", "mem_f2"]
