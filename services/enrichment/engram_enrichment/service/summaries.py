"""Keeping an entity's optional summary in step with its facts, without ever blocking it."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

from opentelemetry import metrics

from engram_enrichment.domain.model import ArticleSummary, Entity
from engram_enrichment.domain.summary import clip, facts_sha256, is_current, prompt
from engram_enrichment.ports import Summariser, SummaryFailed

log = logging.getLogger(__name__)
SUMMARIES = "engram.enrichment.summaries"
MAX_MODEL_CHARS = 200


def _now() -> datetime:
    return datetime.now(UTC)


class Summaries:
    """A stale summary is dropped; a new one is asked for; a failure leaves the article without."""

    def __init__(
        self, summariser: Summariser | None = None, *, clock: Callable[[], datetime] = _now
    ) -> None:
        self.summariser = summariser
        self.clock = clock
        self.counts: Counter[str] = Counter()
        self._counter = metrics.get_meter("engram").create_counter(
            SUMMARIES, unit="{summary}", description="summariser calls, by outcome"
        )

    def _count(self, outcome: str) -> None:
        self.counts[outcome] += 1
        self._counter.add(1, {"outcome": outcome})

    async def refresh(self, entity: Entity) -> None:
        """Keep a summary of the same live facts; otherwise replace it or leave it out."""
        if self.summariser is None and entity.summary is None:
            return
        digest = facts_sha256(entity)
        if is_current(entity, digest):
            return
        entity.summary = None
        if self.summariser is None or digest is None:
            return
        try:
            generated = await self.summariser.summarise(prompt(entity))
        except Exception as exc:
            kind = str(exc) if isinstance(exc, SummaryFailed) else type(exc).__name__
            self._count("failed")
            log.warning(
                "summary failed; article written without it",
                extra={
                    "tenant_id": entity.tenant_id,
                    "entity_id": entity.entity_id,
                    "facts_sha256": digest,
                    "failure": kind,
                },
            )
            return
        entity.summary = ArticleSummary(
            text=clip(generated.text),
            model=generated.model[:MAX_MODEL_CHARS],
            generated_at=self.clock(),
            facts_sha256=digest,
        )
        self._count("generated")
        log.info(
            "summary generated",
            extra={
                "tenant_id": entity.tenant_id,
                "entity_id": entity.entity_id,
                "facts_sha256": digest,
            },
        )
