"""Fusing a hybrid search's dense and lexical candidates into one ranking, and recency decay.

Pure functions over any candidate with both engines' scores and ranks (the store's hits); each
returns (candidate, fused score) pairs best first, ties broken by the dense score, then the id.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Set
from typing import Protocol, TypeVar


class Candidate(Protocol):
    """What fusion reads of a hit: each engine's score and 1-based rank, and an id for ties.

    dense is the cosine; lexical the engine's sparse score with IDF (0.0: no shared term, None:
    no lexical query); a rank is None when the hit is not in that engine's candidate list."""

    @property
    def id(self) -> str: ...

    @property
    def dense(self) -> float: ...

    @property
    def lexical(self) -> float | None: ...

    @property
    def dense_rank(self) -> int | None: ...

    @property
    def lexical_rank(self) -> int | None: ...


C = TypeVar("C", bound=Candidate)

RRF_K = 60
"""The constant of Cormack et al. (2009): rank 1 weighs 1/61, rank 10 1/70, a gentle slope."""
CONVEX_ALPHA = 0.5
"""Equal say by default; on tests/fixtures/retrieval paraphrases do best near 0.9 and exact
identifiers from 0.8 down, so callers may choose alpha by whether the query has identifiers."""


EVIDENCE_SHARE = 0.75
"""A best lexical hit holding this share of the query's terms is full evidence..."""
EVIDENCE_TERMS = 4
"""...and so is one holding this many of them, whatever the query's length (long claims)."""
EVIDENCE_POWER = 4
"""Weaker evidence shrinks the lexical weight steeply: half the evidence keeps 1/16 of it."""


def lexical_evidence(query_terms: Set[int], best_terms: Set[int]) -> float:
    """How far the best lexical hit is evidence, on [0, 1], from the query terms it holds.

    Max-normalised lexical scores give the best hit 1.0 even when it shares one common word of
    a paraphrase; this says how much of the query that hit actually covers (terms as the
    lexical encoder's indices): min(1, max(shared / (0.75 * |query|), shared / 4))."""
    if not query_terms:
        return 0.0
    shared = len(query_terms & best_terms)
    return min(1.0, max(shared / (EVIDENCE_SHARE * len(query_terms)), shared / EVIDENCE_TERMS))


def evidence_alpha(alpha: float, evidence: float) -> float:
    """The dense weight once the lexical share is scaled by the evidence: full evidence keeps
    alpha, none leaves the dense ranking alone; 1 - (1 - alpha) * evidence ** 4."""
    if not 0.0 <= alpha <= 1.0 or not 0.0 <= evidence <= 1.0:
        raise ValueError("evidence_alpha needs alpha and evidence on [0, 1]")
    return 1.0 - (1.0 - alpha) * evidence**EVIDENCE_POWER


def best_lexical(candidates: Iterable[C]) -> C | None:
    """The candidate whose lexical score is best (ties: better dense, then smaller id); None
    when no candidate shares a term with the query."""
    shared = [c for c in candidates if _lexical(c) > 0.0]
    return min(shared, key=lambda c: (-_lexical(c), -c.dense, c.id), default=None)


def rrf(
    candidates: Iterable[C], *, k: float = RRF_K, weights: tuple[float, float] = (1.0, 1.0)
) -> list[tuple[C, float]]:
    """Reciprocal-rank fusion: w_dense/(k + dense_rank) + w_lexical/(k + lexical_rank).

    A missing rank adds nothing, nor does a lexical rank whose score is 0.0 (no shared term)."""
    if k < 0 or min(weights) < 0:
        raise ValueError("rrf needs k >= 0 and non-negative weights")
    dense_weight, lexical_weight = weights
    scored = []
    for candidate in candidates:
        fused = 0.0
        if candidate.dense_rank is not None:
            fused += dense_weight / (k + _rank(candidate.dense_rank))
        if candidate.lexical_rank is not None and _lexical(candidate) > 0.0:
            fused += lexical_weight / (k + _rank(candidate.lexical_rank))
        scored.append((candidate, fused))
    return _ordered(scored)


def convex(candidates: Iterable[C], *, alpha: float = CONVEX_ALPHA) -> list[tuple[C, float]]:
    """A convex combination alpha * dense' + (1 - alpha) * lexical' of scores put on [0, 1].

    dense' maps the cosine from [-1, 1] onto [0, 1], the same for every query and candidate set;
    lexical' divides by the best lexical score among the candidates (all 0 when none matched)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("convex needs 0 <= alpha <= 1")
    pool = list(candidates)
    best_lexical = max((_lexical(c) for c in pool), default=0.0)
    scored = []
    for candidate in pool:
        dense = (min(max(candidate.dense, -1.0), 1.0) + 1.0) / 2.0
        lexical = _lexical(candidate) / best_lexical if best_lexical > 0.0 else 0.0
        scored.append((candidate, alpha * dense + (1.0 - alpha) * lexical))
    return _ordered(scored)


def decayed(fused_score: float, age_days: float, half_life_days: float) -> float:
    """The recency formula: the score halves every half-life, fused * 2 ** (-age / half_life).

    A negative age (a clock ahead of ours) counts as new."""
    if half_life_days <= 0:
        raise ValueError("half_life_days must be positive")
    return fused_score * math.exp2(-max(age_days, 0.0) / half_life_days)


def _lexical(candidate: Candidate) -> float:
    """The lexical score when the candidate shares a term with the query, else 0."""
    return candidate.lexical if candidate.lexical is not None and candidate.lexical > 0.0 else 0.0


def _rank(rank: int) -> int:
    """A 1-based rank, checked: rank 0 would weigh more than the first."""
    if rank < 1:
        raise ValueError(f"ranks are 1-based, got {rank}")
    return rank


def _ordered(scored: list[tuple[C, float]]) -> list[tuple[C, float]]:
    """Best fused score first; ties go to the better dense score, then the smaller id."""
    return sorted(scored, key=lambda pair: (-pair[1], -pair[0].dense, pair[0].id))
