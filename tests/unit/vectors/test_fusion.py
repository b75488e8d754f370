"""Fusing dense and lexical candidates: reciprocal ranks, a convex combination, recency decay."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from engram_vectors.fusion import (
    best_lexical,
    convex,
    decayed,
    evidence_alpha,
    lexical_evidence,
    rrf,
)

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class Hit:
    """A candidate as the store returns it, minus the payload."""

    id: str
    dense: float
    lexical: float | None = None
    dense_rank: int | None = None
    lexical_rank: int | None = None


def order(fused: list[tuple[Hit, float]]) -> list[str]:
    """The ids, best first."""
    return [hit.id for hit, _ in fused]


def near_misses(ranks: range) -> list[Hit]:
    """Dense-only hits: similar wording, no shared term."""
    return [
        Hit(f"near{rank}", dense=0.8 - rank / 100, lexical=0.0, dense_rank=rank) for rank in ranks
    ]


EXACT = Hit("exact", dense=0.31, lexical=9.5, lexical_rank=1)


def test_rrf_puts_a_lexical_only_exact_match_above_dense_only_near_misses() -> None:
    """Lexical rank 1 outweighs every dense rank from 2 down."""
    fused = rrf([*near_misses(range(2, 8)), EXACT])
    assert order(fused)[0] == "exact"
    assert fused[0][1] == pytest.approx(1 / 61)


def test_rrf_ties_rank_one_of_each_list_and_weights_break_it() -> None:
    """Equal weights tie the two first places (the dense score decides); a lexical weight wins it."""
    candidates = [*near_misses(range(1, 8)), EXACT]
    assert order(rrf(candidates))[:2] == ["near1", "exact"]
    assert order(rrf(candidates, weights=(1.0, 1.5)))[0] == "exact"


def test_rrf_puts_first_the_candidate_first_in_both_lists() -> None:
    """Rank 1 in both lists beats rank 1 in one."""
    both = Hit("both", dense=0.6, lexical=4.0, dense_rank=1, lexical_rank=1)
    dense_only = Hit("dense", dense=0.9, lexical=0.0, dense_rank=2)
    lexical_only = Hit("lexical", dense=0.1, lexical=8.0, lexical_rank=2)
    fused = rrf([dense_only, lexical_only, both])
    assert order(fused) == ["both", "dense", "lexical"]
    assert fused[0][1] == pytest.approx(2 / 61)


def test_rrf_missing_ranks_add_nothing() -> None:
    """A candidate in neither list scores 0 and comes last."""
    fused = rrf(
        [Hit("none", dense=0.99), Hit("dense", dense=0.5, dense_rank=3)],
    )
    assert order(fused) == ["dense", "none"]
    assert fused[1][1] == 0.0


def test_rrf_a_zero_or_absent_lexical_score_adds_nothing_even_when_ranked() -> None:
    """0.0 means no shared term; None means no lexical query: neither counts its rank."""
    zero = Hit("zero", dense=0.5, lexical=0.0, dense_rank=2, lexical_rank=1)
    absent = Hit("absent", dense=0.4, lexical=None, dense_rank=2, lexical_rank=1)
    assert [score for _, score in rrf([zero, absent])] == [pytest.approx(1 / 62)] * 2


def test_rrf_weights_scale_each_list() -> None:
    """Zero weight removes a list; the other alone decides the order."""
    a = Hit("a", dense=0.9, lexical=1.0, dense_rank=1, lexical_rank=3)
    b = Hit("b", dense=0.5, lexical=5.0, dense_rank=3, lexical_rank=1)
    assert order(rrf([a, b], weights=(1.0, 0.0))) == ["a", "b"]
    assert order(rrf([a, b], weights=(0.0, 1.0))) == ["b", "a"]
    assert rrf([a], k=10, weights=(2.0, 3.0))[0][1] == pytest.approx(2 / 11 + 3 / 13)


def test_fused_ties_go_to_the_dense_score_then_the_id() -> None:
    """Equal fused scores: better cosine first, then the smaller id, whatever the input order."""
    hits = [
        Hit("c", dense=0.5, dense_rank=4),
        Hit("b", dense=0.5, lexical=1.0, lexical_rank=4),
        Hit("a", dense=0.7, lexical=1.0, lexical_rank=4),
    ]
    assert order(rrf(hits)) == ["a", "b", "c"]
    assert order(rrf(list(reversed(hits)))) == ["a", "b", "c"]


def test_rrf_refuses_bad_ranks_and_parameters() -> None:
    """Ranks are 1-based; k and the weights are not negative."""
    with pytest.raises(ValueError, match="1-based"):
        rrf([Hit("a", dense=0.5, dense_rank=0)])
    with pytest.raises(ValueError):
        rrf([], k=-1)
    with pytest.raises(ValueError):
        rrf([], weights=(1.0, -0.5))


def test_rrf_of_nothing_is_nothing() -> None:
    """No candidates, no ranking."""
    assert rrf([]) == []
    assert convex([]) == []


def test_convex_maps_the_cosine_and_divides_lexical_by_its_best() -> None:
    """alpha * (cos + 1) / 2 + (1 - alpha) * lexical / best lexical."""
    a = Hit("a", dense=0.6, lexical=2.0)
    b = Hit("b", dense=0.2, lexical=8.0)
    scores = dict((hit.id, score) for hit, score in convex([a, b], alpha=0.25))
    assert scores["a"] == pytest.approx(0.25 * 0.8 + 0.75 * 0.25)
    assert scores["b"] == pytest.approx(0.25 * 0.6 + 0.75 * 1.0)


def test_convex_with_no_lexical_match_is_the_dense_order() -> None:
    """All lexical scores zero or absent: lexical' is 0 for all, nothing divides by zero."""
    hits = [Hit("a", dense=0.3, lexical=0.0), Hit("b", dense=0.7, lexical=None)]
    fused = convex(hits, alpha=0.5)
    assert order(fused) == ["b", "a"]
    assert [score for _, score in fused] == [pytest.approx(0.425), pytest.approx(0.325)]


def test_convex_of_a_single_candidate() -> None:
    """One candidate with a match: its lexical' is 1."""
    assert convex([Hit("a", dense=0.0, lexical=3.0)], alpha=0.5)[0][1] == pytest.approx(0.75)
    assert convex([Hit("a", dense=1.0)], alpha=0.5)[0][1] == pytest.approx(0.5)


def test_convex_alpha_extremes_pick_one_engine() -> None:
    """alpha 1 is dense alone, alpha 0 lexical alone; cosines a hair past 1 are clamped."""
    a = Hit("a", dense=1.0000001, lexical=1.0)
    b = Hit("b", dense=0.1, lexical=4.0)
    assert order(convex([a, b], alpha=1.0)) == ["a", "b"]
    assert convex([a, b], alpha=1.0)[0][1] == 1.0
    assert order(convex([a, b], alpha=0.0)) == ["b", "a"]
    with pytest.raises(ValueError):
        convex([a], alpha=1.5)


def test_convex_lets_an_exact_match_overtake_near_misses() -> None:
    """A lexical-only exact match with a weaker cosine wins at alpha 0.5."""
    fused = convex([*near_misses(range(1, 6)), EXACT], alpha=0.5)
    assert order(fused)[0] == "exact"


def test_decay_halves_at_one_half_life() -> None:
    """The recency formula: fused * 2 ** (-age / half_life)."""
    assert decayed(0.8, 30.0, 30.0) == pytest.approx(0.4)
    assert decayed(0.8, 60.0, 30.0) == pytest.approx(0.2)
    assert decayed(0.8, 0.0, 30.0) == 0.8


def test_decay_is_monotone_and_ignores_negative_ages() -> None:
    """Older never scores more; an age from a clock ahead of ours counts as new."""
    scores = [decayed(1.0, age, 7.0) for age in (0, 0.5, 1, 3, 7, 30, 365)]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == len(scores)
    assert decayed(1.0, -5.0, 7.0) == 1.0


def test_decay_needs_a_positive_half_life() -> None:
    """Zero or negative half-lives have no meaning."""
    with pytest.raises(ValueError):
        decayed(1.0, 1.0, 0.0)


def test_lexical_evidence_is_the_share_of_the_query_the_best_hit_holds() -> None:
    # One term of four: max(1 / (0.75 * 4), 1 / 4) = 1/3; two of three: 2 / 2.25.
    assert lexical_evidence({1, 2, 3, 4}, {1, 9}) == pytest.approx(1 / 3)
    assert lexical_evidence({1, 2, 3}, {1, 2, 7}) == pytest.approx(2 / 2.25)
    assert lexical_evidence({1, 2, 3, 4}, {1, 2, 3}) == 1.0


def test_lexical_evidence_of_a_long_query_counts_terms_held() -> None:
    # A 12-term claim: 4 shared terms are full evidence though they are a third of it.
    claim = set(range(12))
    assert lexical_evidence(claim, {0, 1, 2, 3, 40}) == 1.0
    assert lexical_evidence(claim, {0, 1}) == pytest.approx(0.5)


def test_lexical_evidence_of_nothing_shared_or_no_terms_is_zero() -> None:
    assert lexical_evidence({1, 2}, {3}) == 0.0
    assert lexical_evidence(set(), {3}) == 0.0


def test_evidence_alpha_keeps_alpha_at_full_evidence_and_dense_at_none() -> None:
    assert evidence_alpha(0.8, 1.0) == pytest.approx(0.8)
    assert evidence_alpha(0.8, 0.0) == 1.0
    # Half the evidence keeps 1/16 of the lexical share: 1 - 0.2 / 16.
    assert evidence_alpha(0.8, 0.5) == pytest.approx(0.9875)


def test_evidence_alpha_refuses_values_off_the_unit_interval() -> None:
    with pytest.raises(ValueError):
        evidence_alpha(1.2, 0.5)
    with pytest.raises(ValueError):
        evidence_alpha(0.8, -0.1)


def test_best_lexical_breaks_ties_by_dense_then_id_and_skips_unshared() -> None:
    hits = [
        Hit("b", dense=0.5, lexical=3.0),
        Hit("a", dense=0.5, lexical=3.0),
        Hit("c", dense=0.6, lexical=3.0),
        Hit("d", dense=0.9, lexical=0.0),
    ]
    assert best_lexical(hits) == hits[2]
    assert best_lexical(hits[:2]) == hits[1]
    assert best_lexical([Hit("d", dense=0.9, lexical=0.0), Hit("e", dense=0.2)]) is None
