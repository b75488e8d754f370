"""What the ops dashboard shows a tenant's operators: the pipeline, recent traces, prune jobs and
dead letters, and a trace found by id (ids, counts and hashes only)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from engram_gateway.domain import pipeline
from engram_gateway.domain.dead_letters import Letter
from engram_gateway.domain.waterfall import summary
from engram_gateway.ports import TelemetryReads
from engram_gateway.service.dead_letters import DeadLetterOffice
from engram_gateway.service.pruning import Pruning

WINDOW = timedelta(minutes=15)
"""The pipeline picture's window of metric points."""
TRACE_ID = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class Overview:
    """The dashboard's page: the pipeline picture, recent traces, prune jobs and dead letters."""

    picture: dict[str, Any]
    window_minutes: int
    traces: list[dict[str, Any]]
    jobs: list[dict[str, Any]]
    letters: list[Letter]

    @property
    def consumers(self) -> list[str]:
        """The consumers with letters left to replay (the replay-all form's choices)."""
        return sorted({item.letter.consumer for item in self.letters if not item.replayed_at})


class OpsViews:
    """Reads the stored telemetry, prune jobs and dead letters of one tenant at a time."""

    def __init__(
        self, telemetry: TelemetryReads, letters: DeadLetterOffice, pruning: Pruning
    ) -> None:
        self.telemetry = telemetry
        self.letters = letters
        self.pruning = pruning

    async def overview(self, tenant_id: str) -> Overview:
        """The dashboard's figures over the last WINDOW and the tenant's newest items."""
        figures = pipeline.summarize(await self.telemetry.metric_points(WINDOW))
        trace_ids = await self.telemetry.recent_trace_ids(tenant_id)
        return Overview(
            picture=pipeline.picture(figures, WINDOW.total_seconds()),
            window_minutes=int(WINDOW.total_seconds() // 60),
            traces=await self._summaries(trace_ids),
            jobs=await self.pruning.recent(tenant_id),
            letters=await self.letters.read(tenant_id),
        )

    async def trace(self, tenant_id: str, trace_id: str) -> list[dict[str, Any]]:
        """One of the tenant's traces, its spans; empty when it has none by that id."""
        if not TRACE_ID.fullmatch(trace_id):
            return []
        return await self.telemetry.trace(tenant_id, trace_id)

    async def lookup(
        self, tenant_id: str, engram_id: str
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """The traces naming an id (a document, record, memory, prune job, or a trace id
        itself), and each one's summary when there are several."""
        trace_ids = await self.telemetry.traces_naming(tenant_id, engram_id)
        if not trace_ids and await self.trace(tenant_id, engram_id):
            trace_ids = [engram_id]
        if len(trace_ids) == 1:
            return trace_ids, []
        return trace_ids, await self._summaries(trace_ids)

    async def _summaries(self, trace_ids: list[str]) -> list[dict[str, Any]]:
        grouped = await self.telemetry.spans_of(trace_ids)
        return [summary(grouped[t]) for t in trace_ids if grouped.get(t)]
