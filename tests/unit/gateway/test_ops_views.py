"""The ops dashboard's reads for one tenant: an id names one trace (opened at once) or several
(listed), a trace id finds its own trace, and the overview lists what is left to replay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from engram_events.payloads.dlq import DeadLetter
from engram_gateway.domain.dead_letters import Letter
from engram_gateway.service.dead_letters import DeadLetterOffice
from engram_gateway.service.ops_views import OpsViews
from engram_gateway.service.pruning import Pruning

pytestmark = pytest.mark.unit

T = "tnt_a"
AT = datetime(2026, 12, 7, tzinfo=UTC)
TRACE_1, TRACE_2 = "a" * 32, "b" * 32


def _span(trace_id: str, name: str) -> dict[str, Any]:
    return {
        "trace_id": trace_id,
        "span_id": f"{trace_id[:4]}{name}",
        "parent_id": None,
        "name": name,
        "service": "gateway",
        "start": AT,
        "end": AT + timedelta(milliseconds=12),
    }


class Telemetry:
    """Stored traces of tenant `tnt_a`, and which ids each names."""

    def __init__(self) -> None:
        self.spans = {TRACE_1: [_span(TRACE_1, "POST memories")], TRACE_2: [_span(TRACE_2, "x")]}
        self.naming = {"mem_1": [TRACE_1], "doc_1": [TRACE_1, TRACE_2]}

    async def metric_points(self, window: timedelta) -> list[dict[str, Any]]:
        return []

    async def trace(self, tenant_id: str, trace_id: str) -> list[dict[str, Any]]:
        return self.spans.get(trace_id, []) if tenant_id == T else []

    async def traces_naming(self, tenant_id: str, engram_id: str, limit: int = 20) -> list[str]:
        return self.naming.get(engram_id, []) if tenant_id == T else []

    async def recent_trace_ids(self, tenant_id: str, limit: int = 15) -> list[str]:
        return [TRACE_2, TRACE_1] if tenant_id == T else []

    async def spans_of(self, trace_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        return {t: self.spans[t] for t in trace_ids if t in self.spans}


def _letter(offset: int, consumer: str, replayed: bool) -> Letter:
    letter = DeadLetter(
        consumer=consumer,
        topic="engram.memories.v1",
        partition=0,
        offset=offset,
        tenant_id=T,
        error_type="ValueError",
        error="",
        attempts=1,
        value_base64="",
        failed_at=AT,
    )
    return Letter(0, offset, letter, AT if replayed else None)


class Letters:
    async def read(self, tenant_id: str) -> list[Letter]:
        return [_letter(2, "memory", replayed=False), _letter(1, "ingest", replayed=True)]


class Jobs:
    async def recent(self, tenant_id: str) -> list[str]:
        return []


def _views() -> OpsViews:
    office = DeadLetterOffice(cast(Any, Letters()))
    return OpsViews(cast(Any, Telemetry()), office, Pruning(cast(Any, Jobs())))


async def test_an_id_in_one_trace_opens_it_and_an_id_in_several_lists_them() -> None:
    views = _views()
    assert await views.lookup(T, "mem_1") == ([TRACE_1], [])
    ids, listed = await views.lookup(T, "doc_1")
    assert ids == [TRACE_1, TRACE_2]
    assert [(s["trace_id"], s["name"], s["duration_ms"]) for s in listed] == [
        (TRACE_1, "POST memories", 12.0),
        (TRACE_2, "x", 12.0),
    ]


async def test_a_trace_id_finds_its_trace_and_nothing_leaks_across_tenants() -> None:
    views = _views()
    assert await views.lookup(T, TRACE_2) == ([TRACE_2], [])
    assert await views.lookup("tnt_b", TRACE_2) == ([], [])
    assert await views.lookup(T, "mem_unknown") == ([], [])
    assert await views.trace(T, "not-a-trace-id") == []
    assert await views.trace("tnt_b", TRACE_1) == []


async def test_the_overview_lists_the_newest_traces_with_the_pipeline_picture() -> None:
    shown = await _views().overview(T)
    assert [t["trace_id"] for t in shown.traces] == [TRACE_2, TRACE_1]
    assert shown.window_minutes == 15 and shown.picture["boxes"]
    assert shown.jobs == [] and len(shown.letters) == 2
    assert shown.consumers == ["memory"], "only a consumer with letters left to replay"
