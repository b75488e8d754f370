"""Ranking hybrid candidates: the mode's order, recency, and the floor with its one exception.

Memory recall and knowledge search share it. The floor applies to the dense (cosine) score, as
it always has; a hit that carries one of the query's exact identifiers (an order number, a SKU,
an email) is never dropped by it, because dense vectors do not see identifiers and the lexical
match is the evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from engram_vectors.fusion import (
    best_lexical,
    convex,
    decayed,
    evidence_alpha,
    lexical_evidence,
    rrf,
)
from engram_vectors.lexical import (
    LEXICAL_ENCODER,
    document_vector,
    identifiers,
    may_hold_identifier,
    query_vector,
)
from engram_vectors.models import HybridHit

Mode = Literal["hybrid", "dense", "lexical"]
Fusion = Literal["rrf", "convex"]
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class FusionSettings:
    """How hybrid mode fuses the dense and lexical lists (chosen by bench/retrieval_quality:
    a convex combination keeps how far ahead an exact match is, which reciprocal ranks lose).

    With convex fusion the dense weight is `identifier_alpha` for a query naming identifiers
    (they need the lexical list to outvote near misses the dense list prefers); for any other
    query `convex_alpha` is the weight when the best lexical hit is full evidence, and the
    lexical share shrinks as that hit covers less of the query (`fusion.lexical_evidence`), so
    one shared common word does not overturn the dense top."""

    method: Fusion = "convex"
    convex_alpha: float = 0.8
    identifier_alpha: float = 0.7
    rrf_k: int = 60


@dataclass(frozen=True)
class Ranked:
    """A candidate with the score that ordered it and whether the floor lets it through."""

    hit: HybridHit
    fused: float
    identifier_match: bool


def dense_weight(
    hits: Sequence[HybridHit],
    query: str,
    fusion: FusionSettings,
    wanted: frozenset[str],
    text_of: Callable[[HybridHit], str],
    encoder: str,
) -> float:
    """Convex fusion's dense weight for this query: the identifier weight when it names one,
    else the configured weight scaled by the best lexical hit's evidence (one tokenization)."""
    if wanted:
        return fusion.identifier_alpha
    best = best_lexical(hits)
    if best is None:
        return fusion.convex_alpha
    evidence = lexical_evidence(
        frozenset(query_vector(query, encoder).indices),
        frozenset(document_vector(text_of(best), encoder).indices),
    )
    return evidence_alpha(fusion.convex_alpha, evidence)


def _order(
    hits: Sequence[HybridHit],
    query: str,
    mode: Mode,
    fusion: FusionSettings,
    wanted: frozenset[str],
    text_of: Callable[[HybridHit], str],
    encoder: str,
) -> list[tuple[HybridHit, float]]:
    """Candidates best first under the mode; lexical mode keeps only hits sharing a term."""
    if mode == "dense":
        return sorted(((h, h.dense) for h in hits), key=lambda p: (-p[1], p[0].id))
    if mode == "lexical":
        shared = [(h, h.lexical or 0.0) for h in hits if (h.lexical or 0.0) > 0.0]
        return sorted(shared, key=lambda p: (-p[1], -p[0].dense, p[0].id))
    if fusion.method == "convex":
        alpha = dense_weight(hits, query, fusion, wanted, text_of, encoder)
        return convex(hits, alpha=alpha)
    return rrf(hits, k=fusion.rrf_k)


def whole_identifiers(query: str) -> frozenset[str]:
    """The query's identifiers as written, not their parts: `INV-2026-0042` counts, the `2026`
    inside it does not (a year in a memory is no exact match for an invoice number)."""
    found = identifiers(query)
    return frozenset(t for t in found if not any(t != other and t in other for other in found))


def _age_days(hit: HybridHit, now: datetime) -> float:
    """How old a hit is, from the `created_at` its payload carries (unknown: not aged)."""
    try:
        created = datetime.fromisoformat(str(hit.payload.get("created_at")))
    except ValueError:
        return 0.0
    if created.tzinfo is None:
        return 0.0
    return max(0.0, (now - created).total_seconds() / SECONDS_PER_DAY)


def payload_content(hit: HybridHit) -> str:
    """The text a memory's point carries, where identifier matches are looked for."""
    return str(hit.payload.get("content") or "")


def rank(
    hits: Sequence[HybridHit],
    query: str,
    mode: Mode,
    fusion: FusionSettings,
    *,
    half_life_days: float | None = None,
    now: datetime,
    text_of: Callable[[HybridHit], str] = payload_content,
    encoder: str = LEXICAL_ENCODER,
) -> list[Ranked]:
    """Order candidates by the mode (then by recency decay when asked), marking identifier
    matches: hits whose content holds one of the query's whole identifiers and that the
    lexical retrieval scored. `encoder` is the collection's lexical encoder (for the evidence)."""
    wanted = whole_identifiers(query)
    ordered = _order(hits, query, mode, fusion, wanted, text_of, encoder)
    if half_life_days is not None:
        ordered = sorted(
            ((h, decayed(score, _age_days(h, now), half_life_days)) for h, score in ordered),
            key=lambda p: -p[1],
        )
    return [Ranked(hit, score, matches(hit, wanted, text_of(hit))) for hit, score in ordered]


def matches(hit: HybridHit, wanted: frozenset[str], content: str) -> bool:
    """Whether a hit is an identifier match: the lexical retrieval scored it and its content
    holds one of the query's whole identifiers (`wanted`)."""
    return (
        bool(wanted)
        and (hit.lexical or 0.0) > 0.0
        and may_hold_identifier(content, wanted)
        and bool(wanted & identifiers(content))
    )


def needing_content(ranked: Sequence[Ranked], floor: float, top_k: int) -> list[Ranked]:
    """The prefix of a ranking that decides `floor_ranked`: up to the `top_k`-th hit sure to
    pass (its dense score reaches the floor), and every hit tied with the last one (a tie goes
    to the smaller id, which a search without payloads does not know yet)."""
    prefix: list[Ranked] = []
    sure = 0
    for item in ranked:
        if sure >= top_k and _key(item) != _key(prefix[-1]):
            break
        prefix.append(item)
        sure += item.hit.dense >= floor
    return prefix


def _key(item: Ranked) -> tuple[float, float]:
    return (item.fused, item.hit.dense)


@dataclass(frozen=True)
class FloorResult:
    """The top-k that passed the floor, and how many of the unfloored top-k it dropped."""

    kept: list[Ranked]
    dropped: int


def floor_ranked(ranked: Sequence[Ranked], floor: float, top_k: int) -> FloorResult:
    """The best `top_k` whose dense score reaches the floor or that match an identifier;
    `dropped` counts the hits of the unfloored top-k the floor removed."""

    def passes(item: Ranked) -> bool:
        return item.hit.dense >= floor or item.identifier_match

    kept = [item for item in ranked if passes(item)][:top_k]
    dropped = sum(1 for item in ranked[:top_k] if not passes(item))
    return FloorResult(kept, dropped)
