"""Hybrid recall planned once for every adapter: the dense and lexical candidates, then the score
each candidate lacks, so every hit carries both.

The plan is engine-free: it says which queries to run and assembles their results. An adapter
runs each batch of queries (filters inside the engine, never after) and may run both batches in
one call to its engine. A lexical-only candidate's cosine comes from a second dense query limited
to those ids, not from its returned vector: the score is then the engine's own, computed exactly as
the dense candidates' were, and no vectors cross into Python. A dense-only candidate's lexical
score comes from a lexical query limited to those ids; one it does not return shares no term with
the query and scores 0.0.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from engram_vectors.checks import PreparedSparse, UnitVector, split_payload
from engram_vectors.filters import Conditions
from engram_vectors.models import HybridHit, Payload


@dataclass(frozen=True)
class DenseQuery:
    """Nearest points by cosine among those matching `conditions` (and among `ids`, if given)."""

    vector: UnitVector
    limit: int
    conditions: Conditions = ()
    ids: tuple[uuid.UUID, ...] | None = None
    with_payload: bool = True


@dataclass(frozen=True)
class LexicalQuery:
    """Points sharing a term with `sparse`, by IDF-weighted dot product, among those matching
    `conditions` (and among `ids`, if given); IDF is computed over the points matching
    `idf_conditions` that have a lexical vector (every such point when there are none)."""

    sparse: PreparedSparse
    limit: int
    idf_conditions: Conditions
    conditions: Conditions = ()
    ids: tuple[uuid.UUID, ...] | None = None
    with_payload: bool = True


EngineQuery = DenseQuery | LexicalQuery


@dataclass(frozen=True)
class Scored:
    """One engine result: its engine id, score, and stored payload (empty when not asked for)."""

    engine_id: uuid.UUID
    score: float
    payload: Payload


Batch = list[list[Scored]]


@dataclass(frozen=True)
class HybridPlan:
    """One hybrid search: `sparse` None means no lexical query was asked for."""

    vector: UnitVector
    sparse: PreparedSparse | None
    limit: int
    conditions: Conditions
    idf_conditions: Conditions
    with_payload: bool = True
    """False: candidates carry no payload and their engine id as id (`hit_payloads` reads
    those of the few hits a caller keeps; reading 50 payloads cost more than both queries)."""

    @property
    def _lexical_runs(self) -> bool:
        """Whether there is a lexical query to run (a query without terms matches nothing)."""
        return self.sparse is not None and len(self.sparse) > 0

    def _lexical(
        self,
        limit: int,
        conditions: Conditions = (),
        ids: tuple[uuid.UUID, ...] | None = None,
        with_payload: bool = True,
    ) -> LexicalQuery:
        assert self.sparse is not None
        return LexicalQuery(self.sparse, limit, self.idf_conditions, conditions, ids, with_payload)

    def candidates(self) -> list[EngineQuery]:
        """The dense top-`limit` and, with a lexical query, the lexical top-`limit`."""
        queries: list[EngineQuery] = [
            DenseQuery(self.vector, self.limit, self.conditions, with_payload=self.with_payload)
        ]
        if self._lexical_runs:
            queries.append(
                self._lexical(self.limit, self.conditions, with_payload=self.with_payload)
            )
        return queries

    def _split(self, found: Batch) -> tuple[list[Scored], list[Scored]]:
        """The dense and lexical candidate lists."""
        return found[0], (found[1] if self._lexical_runs else [])

    def completions(self, found: Batch) -> list[EngineQuery]:
        """Queries for the scores the candidates lack, each limited to the ids lacking it."""
        dense, lexical = self._split(found)
        dense_ids = {scored.engine_id for scored in dense}
        lexical_ids = {scored.engine_id for scored in lexical}
        queries: list[EngineQuery] = []
        dense_only = tuple(
            scored.engine_id for scored in dense if scored.engine_id not in lexical_ids
        )
        if self._lexical_runs and dense_only:
            queries.append(self._lexical(len(dense_only), ids=dense_only, with_payload=False))
        lexical_only = tuple(
            scored.engine_id for scored in lexical if scored.engine_id not in dense_ids
        )
        if lexical_only:
            queries.append(
                DenseQuery(self.vector, len(lexical_only), ids=lexical_only, with_payload=False)
            )
        return queries

    def hits(self, found: Batch, completed: Batch) -> list[HybridHit]:
        """Dense candidates by dense rank, then lexical-only ones by lexical rank, all with both
        scores (a lexical-only candidate that vanished before its cosine was read is left out)."""
        dense, lexical = self._split(found)
        dense_scores = {scored.engine_id: scored.score for scored in dense}
        lexical_scores = {scored.engine_id: scored.score for scored in lexical}
        for query, results in zip(self.completions(found), completed, strict=True):
            scores = dense_scores if isinstance(query, DenseQuery) else lexical_scores
            scores.update((scored.engine_id, scored.score) for scored in results)
        dense_ranks = {scored.engine_id: rank for rank, scored in enumerate(dense, 1)}
        lexical_ranks = {scored.engine_id: rank for rank, scored in enumerate(lexical, 1)}
        ordered = dense + [scored for scored in lexical if scored.engine_id not in dense_ranks]
        hits = []
        for scored in ordered:
            engine_id = scored.engine_id
            if engine_id not in dense_scores:
                continue
            original, payload = split_payload(scored.payload, str(engine_id))
            hits.append(
                HybridHit(
                    id=original,
                    payload=payload,
                    dense=dense_scores[engine_id],
                    lexical=None if self.sparse is None else lexical_scores.get(engine_id, 0.0),
                    dense_rank=dense_ranks.get(engine_id),
                    lexical_rank=lexical_ranks.get(engine_id),
                )
            )
        return hits

    def run(self, execute: Callable[[list[EngineQuery]], Batch]) -> list[HybridHit]:
        """Both steps through one synchronous executor (an engine's own thread)."""
        found = execute(self.candidates())
        completions = self.completions(found)
        return self.hits(found, execute(completions) if completions else [])
