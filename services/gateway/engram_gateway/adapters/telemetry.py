"""Reads the local telemetry store (spans and metric points) for the dashboard, tenant-scoped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from engram_platform.telemetry_store import METRICS_COLLECTION
from engram_platform.tracing import SPANS_COLLECTION, unpack_spans

_ROW_FIELDS = {"trace_id": 1, "engram_ids": 1, "packed": 1}
MAX_TRACE_SPANS = 2000


class TelemetryReader:
    """Spans and metric points a tenant's ops key may see.

    Spans are stored packed, a row per trace per export, with the ids they name beside them.
    A trace belongs to a tenant when one of its spans names the tenant (`engram.tenant_id`);
    metric points carry no tenant data and are platform-wide.
    """

    def __init__(self, db: Any) -> None:
        self.spans = db[SPANS_COLLECTION]
        self.metrics = db[METRICS_COLLECTION]

    async def metric_points(self, window: timedelta) -> list[dict[str, Any]]:
        """Every point written within the window (the collection is capped and small)."""
        since = datetime.now(UTC) - window
        cursor = self.metrics.find({"time": {"$gte": since}}, {"_id": 0})
        return [doc async for doc in cursor]

    async def trace(self, tenant_id: str, trace_id: str) -> list[dict[str, Any]]:
        """All spans of one trace, or nothing when the trace is not this tenant's."""
        rows = [row async for row in self.spans.find({"trace_id": trace_id}, _ROW_FIELDS)]
        if not any(tenant_id in row.get("engram_ids", []) for row in rows):
            return []
        return [span for row in rows for span in unpack_spans(row)][:MAX_TRACE_SPANS]

    async def traces_naming(self, tenant_id: str, engram_id: str, limit: int = 20) -> list[str]:
        """Trace ids whose spans name this id, newest first, kept only if they are the tenant's."""
        cursor = self.spans.find({"engram_ids": engram_id}, {"trace_id": 1, "start": 1})
        newest: dict[str, datetime] = {}
        async for doc in cursor:
            at = doc["start"]
            if doc["trace_id"] not in newest or at > newest[doc["trace_id"]]:
                newest[doc["trace_id"]] = at
        ordered = sorted(newest, key=lambda t: newest[t], reverse=True)
        return [t for t in ordered if await self._is_tenants(tenant_id, t)][:limit]

    async def recent_trace_ids(self, tenant_id: str, limit: int = 15) -> list[str]:
        """The tenant's most recently started traces."""
        cursor = self.spans.find({"engram_ids": tenant_id}, {"trace_id": 1, "start": 1})
        newest: dict[str, datetime] = {}
        async for doc in cursor:
            at = doc["start"]
            if doc["trace_id"] not in newest or at > newest[doc["trace_id"]]:
                newest[doc["trace_id"]] = at
        return sorted(newest, key=lambda t: newest[t], reverse=True)[:limit]

    async def spans_of(self, trace_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Spans of several traces at once, grouped by trace."""
        grouped: dict[str, list[dict[str, Any]]] = {t: [] for t in trace_ids}
        if not trace_ids:
            return grouped
        cursor = self.spans.find({"trace_id": {"$in": trace_ids}}, _ROW_FIELDS)
        async for row in cursor:
            grouped[row["trace_id"]].extend(unpack_spans(row))
        return grouped

    async def _is_tenants(self, tenant_id: str, trace_id: str) -> bool:
        found = await self.spans.find_one(
            {"trace_id": trace_id, "engram_ids": tenant_id}, {"_id": 1}
        )
        return found is not None
