"""Ranking recall candidates: modes, recency, and the floor's identifier exception."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_vectors import HybridHit
from engram_vectors.fusion import convex
from engram_vectors.ranking import FusionSettings, floor_ranked, rank

pytestmark = pytest.mark.unit
NOW = datetime(2026, 12, 3, tzinfo=UTC)


def hit(
    memory_id: str,
    content: str,
    dense: float,
    lexical: float | None,
    dense_rank: int | None,
    lexical_rank: int | None,
    age_days: float = 0.0,
) -> HybridHit:
    created = (NOW - timedelta(days=age_days)).isoformat()
    payload = {"memory_id": memory_id, "content": content, "created_at": created}
    return HybridHit(memory_id, payload, dense, lexical, dense_rank, lexical_rank)


HITS = [
    hit("near", "order ORD-48214 was delayed at customs", 0.71, 0.9, 1, 2),
    hit("exact", "order ORD-48213 was delayed at customs", 0.69, 4.2, 2, 1),
    hit("other", "the customs office closes at noon", 0.40, 0.3, 3, 3),
]


def ids(ranked: list[Any]) -> list[str]:
    return [r.hit.id for r in ranked]


def test_each_mode_orders_by_its_own_score() -> None:
    query = "what happened with order ORD-48213?"
    fusion = FusionSettings()
    assert ids(rank(HITS, query, "dense", fusion, now=NOW)) == ["near", "exact", "other"]
    assert ids(rank(HITS, query, "lexical", fusion, now=NOW)) == ["exact", "near", "other"]
    assert ids(rank(HITS, query, "hybrid", fusion, now=NOW))[0] == "exact"


def test_lexical_mode_keeps_only_hits_sharing_a_term() -> None:
    hits = [*HITS, hit("dense-only", "something else entirely", 0.5, 0.0, 4, None)]
    ranked = rank(hits, "ORD-48213", "lexical", FusionSettings(), now=NOW)
    assert "dense-only" not in ids(ranked)


def test_an_exact_identifier_is_never_dropped_by_the_floor() -> None:
    query = "ORD-48213"
    low = [
        hit("exact", "order ORD-48213 was delayed", 0.10, 3.0, 2, 1),
        hit("near", "order ORD-48214 was delayed", 0.12, 0.5, 1, 2),
    ]
    ranked = rank(low, query, "hybrid", FusionSettings(), now=NOW)
    floored = floor_ranked(ranked, 0.25, top_k=5)
    assert [r.hit.id for r in floored.kept] == ["exact"]
    assert floored.kept[0].identifier_match
    assert floored.dropped == 1


def test_an_unrelated_query_returns_nothing_and_says_what_it_dropped() -> None:
    ranked = rank(HITS, "lattice gauge theory", "hybrid", FusionSettings(), now=NOW)
    floored = floor_ranked(ranked, 0.8, top_k=2)
    assert floored.kept == [] and floored.dropped == 2


def test_the_floor_backfills_from_below_the_top_k() -> None:
    hits = [
        hit("low", "a common word", 0.1, 5.0, 3, 1),
        hit("good", "relevant text", 0.6, None, 1, None),
        hit("ok", "more relevant text", 0.5, None, 2, None),
    ]
    ranked = rank(hits, "common", "lexical", FusionSettings(), now=NOW)
    assert ids(ranked) == ["low"]
    ranked = rank(hits, "common", "dense", FusionSettings(), now=NOW)
    floored = floor_ranked(ranked, 0.3, top_k=2)
    assert [r.hit.id for r in floored.kept] == ["good", "ok"] and floored.dropped == 0


def test_recency_favours_newer_memories_by_half_life() -> None:
    hits = [
        hit("old", "the meeting moved to Tuesday", 0.80, None, 1, None, age_days=30),
        hit("new", "the meeting moved to Thursday", 0.70, None, 2, None, age_days=1),
    ]
    plain = rank(hits, "meeting", "dense", FusionSettings(), now=NOW)
    decayed = rank(hits, "meeting", "dense", FusionSettings(), half_life_days=7, now=NOW)
    assert ids(plain) == ["old", "new"] and ids(decayed) == ["new", "old"]
    assert decayed[1].fused == pytest.approx(0.80 * 2 ** (-30 / 7))


def test_only_whole_query_identifiers_count_as_exact_matches() -> None:
    query = "status of INV-2026-0042"
    hits = [
        hit("year", "the 2026 budget was approved", 0.05, 1.0, 2, 2),
        hit("invoice", "invoice INV-2026-0042 was paid twice", 0.05, 6.0, 1, 1),
    ]
    floored = floor_ranked(rank(hits, query, "hybrid", FusionSettings(), now=NOW), 0.25, 5)
    assert [r.hit.id for r in floored.kept] == ["invoice"] and floored.dropped == 1
    number = rank([hits[1]], "what about 0042", "hybrid", FusionSettings(), now=NOW)
    assert number[0].identifier_match


def test_an_identifier_query_puts_its_exact_match_first_over_a_closer_cosine() -> None:
    ranked = rank(HITS, "what happened with order ORD-48213?", "hybrid", FusionSettings(), now=NOW)
    assert ids(ranked)[0] == "exact"
    assert ranked[0].identifier_match


def test_one_shared_common_word_does_not_overturn_the_dense_top() -> None:
    # From bench/retrieval_quality (10k): the best lexical hit shares only "book" of the four
    # query terms (evidence 1/3, lexical weight 0.2 / 81); a fixed 0.9 put it first.
    query = "When should I avoid booking calls with the user?"
    hits = [
        hit(
            "meetings",
            "Liam dislikes meetings before 10 am and keeps mornings free.",
            0.307,
            0.0,
            1,
            None,
        ),
        hit(
            "aisle", "Mei books an aisle seat on flights longer than six hours.", 0.250, 5.39, 2, 1
        ),
    ]
    assert convex(hits, alpha=0.9)[0][0].id == "aisle"
    ranked = rank(hits, query, "hybrid", FusionSettings(), now=NOW)
    assert ids(ranked) == ["meetings", "aisle"]
    # 0.9988 * (1 + 0.307) / 2 + 0.0012 * 0: the fused score is almost the mapped cosine.
    assert ranked[0].fused == pytest.approx((1 - 0.2 / 81) * 1.307 / 2)


def test_a_lexical_hit_covering_most_of_the_query_reorders_a_near_tie() -> None:
    # The fixture's "grow at home" question: the answer shares "user" and "grow" of three terms
    # (evidence 2 / 2.25), so its lexical score outvotes a cosine 0.009 higher.
    query = "What does the user grow at home?"
    hits = [
        hit("desk", "The user has a standing desk and stretches every hour.", 0.380, 2.78, 1, 2),
        hit("garden", "The user grows tomatoes and basil on their balcony.", 0.371, 10.42, 2, 1),
    ]
    assert ids(rank(hits, query, "hybrid", FusionSettings(), now=NOW)) == ["garden", "desk"]
    assert ids(rank(hits, query, "dense", FusionSettings(), now=NOW)) == ["desk", "garden"]
