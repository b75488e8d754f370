"""The retrieval benchmark's corpus: what its figures rest on."""

from __future__ import annotations

import pytest

from bench._corpus import agent_memories, corpus, queries, satisfies
from engram_events.memory_filter import MemoryFilter

pytestmark = pytest.mark.unit


def test_a_smaller_corpus_is_a_prefix_of_each_agents_memories() -> None:
    small, large = agent_memories(27, 4, 100), agent_memories(27, 4, 400)[:100]
    assert [(m.memory_id, m.content) for m in small] == [(m.memory_id, m.content) for m in large]


def test_each_identifier_and_fact_answers_one_memory_of_its_agent() -> None:
    memories = agent_memories(27, 0, 1000)
    codes = [m.identifier.lower() for m in memories if m.identifier]
    assert len(codes) == len(set(codes)) > 300
    assert len({m.content for m in memories}) == len(memories)


def test_filtered_questions_are_valid_filters_their_answer_meets() -> None:
    memories = corpus(27, 20, 200)
    by_id = {m.memory_id: m for m in memories}
    asked = [q for q in queries(memories, 27, 40, 40) if q.kind == "filtered"]
    assert len(asked) == 40
    for query in asked:
        assert query.filter is not None
        MemoryFilter.model_validate(query.filter)
        answer = by_id[query.relevant[0]]
        assert satisfies({"user_id": answer.user_id, "metadata": answer.metadata}, query.filter)


def test_satisfies_counts_a_result_outside_the_filter() -> None:
    result = {
        "user_id": "user-2",
        "metadata": {"channel": "chat", "priority": 2, "at": "2026-03-01T00:00:00Z"},
    }
    assert not satisfies(result, {"user_id": "user-1"})
    assert not satisfies(result, {"metadata": {"channel": {"in": ["email", "phone"]}}})
    assert not satisfies(result, {"metadata": {"priority": {"gte": 3}}})
    assert not satisfies(result, {"metadata": {"at": {"gte": "2026-03-02T00:00:00+00:00"}}})
    assert satisfies(result, {"metadata": {"at": {"lte": "2026-03-02T00:00:00+00:00"}}})
