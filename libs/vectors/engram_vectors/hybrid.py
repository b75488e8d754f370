"""Hybrid recall planned once for every adapter: the dense and lexical candidates, then the score
each candidate lacks, so every hit carries both.

The plan is engine-free: it says which queries to run and assembles their results. An adapter
runs each batch of queries (filters inside the engine, never after), or the whole plan in one
call to its engine (`run`, which puts both lexical queries in one batch). A lexical-only
candidate's cosine comes from a second dense query limited to those ids, not from its returned
vector: the score is then the engine's own, computed exactly as the dense candidates' were, and
no vectors cross into Python. A dense-only candidate's lexical score comes from a lexical query
limited to those ids (`run`: to every dense candidate's); one it does not return shares no term
with the query and scores 0.0.
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

    def _dense(self) -> DenseQuery:
        """The dense top-`limit` among the points matching the conditions."""
        return DenseQuery(self.vector, self.limit, self.conditions, with_payload=self.with_payload)

    def candidates(self) -> list[EngineQuery]:
        """The dense top-`limit` and, with a lexical query, the lexical top-`limit`."""
        queries: list[EngineQuery] = [self._dense()]
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
        cosines: list[Scored] = []
        lexical_scores: list[Scored] = []
        for query, results in zip(self.completions(found), completed, strict=True):
            (cosines if isinstance(query, DenseQuery) else lexical_scores).extend(results)
        return self._assemble(dense, lexical, cosines, lexical_scores)

    def _assemble(
        self,
        dense: list[Scored],
        lexical: list[Scored],
        cosines: list[Scored],
        lexical_scores: list[Scored],
    ) -> list[HybridHit]:
        """The hits from both candidate lists and the scores completed for them."""
        dense_scores = {scored.engine_id: scored.score for scored in dense}
        dense_scores.update((scored.engine_id, scored.score) for scored in cosines)
        lexical_by_id = {scored.engine_id: scored.score for scored in lexical}
        lexical_by_id.update((scored.engine_id, scored.score) for scored in lexical_scores)
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
                    lexical=None if self.sparse is None else lexical_by_id.get(engine_id, 0.0),
                    dense_rank=dense_ranks.get(engine_id),
                    lexical_rank=lexical_ranks.get(engine_id),
                )
            )
        return hits

    def run(self, execute: Callable[[list[EngineQuery]], Batch]) -> list[HybridHit]:
        """Three batches through one synchronous executor (an engine's own thread): the dense
        candidates; the lexical candidates with the dense ones' lexical scores, so an engine that
        counts IDF once per batch (qdrant-edge does) counts it once per recall; the lexical-only
        candidates' cosines. The same scores as `candidates` then `completions`."""
        dense = execute([self._dense()])[0]
        if not self._lexical_runs:
            return self._assemble(dense, [], [], [])
        queries: list[EngineQuery] = [
            self._lexical(self.limit, self.conditions, with_payload=self.with_payload)
        ]
        dense_ids = tuple(scored.engine_id for scored in dense)
        if dense_ids:
            queries.append(self._lexical(len(dense_ids), ids=dense_ids, with_payload=False))
        found = execute(queries)
        lexical, lexical_scores = found[0], (found[1] if dense_ids else [])
        seen = set(dense_ids)
        lexical_only = tuple(s.engine_id for s in lexical if s.engine_id not in seen)
        cosines = (
            execute(
                [DenseQuery(self.vector, len(lexical_only), ids=lexical_only, with_payload=False)]
            )[0]
            if lexical_only
            else []
        )
        return self._assemble(dense, lexical, cosines, lexical_scores)
