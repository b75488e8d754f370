"""A tenant's quotas refuse the write that would overrun them (a batch as a whole), before it is
queued; an accepted write counts once whatever its retries, and a tenant's own limits win."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import DOCUMENT_SUBMITTED, MEMORY_WRITE_REQUESTED
from engram_events.payloads.documents import DocumentSubmitted
from engram_events.payloads.memories import MemoryWriteRequested
from engram_gateway.domain.quotas import (
    Usage,
    counted,
    demand_of,
    first_exceeded,
    limits_for,
    parse_override,
)
from engram_gateway.domain.submissions import Submission
from engram_gateway.service.intake import Intake
from engram_gateway.service.quotas import Quotas
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"


class Store:
    """Usage counters and a tenant's own limits, in memory."""

    def __init__(self, overrides: dict[str, int] | None = None) -> None:
        self.counters: dict[str, Usage] = {}
        self.limits = overrides or {}
        self.asked_limits = 0
        self.fail_add = False

    async def used(self, tenant_id: str) -> Usage:
        return self.counters.get(tenant_id, Usage())

    async def add(self, tenant_id: str, amount: Usage) -> None:
        if self.fail_add:
            raise ConnectionError("database down")
        self.counters[tenant_id] = self.counters.get(tenant_id, Usage()).plus(amount)

    async def overrides(self, tenant_id: str) -> dict[str, int]:
        self.asked_limits += 1
        return dict(self.limits)


class Sink:
    def __init__(self) -> None:
        self.published: list[str] = []

    async def publish(self, event: Envelope[Any]) -> None:
        self.published.append(str(event.event_id))

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None:
        self.published.extend(str(e.event_id) for e in events)


class Log:
    """Submissions keyed by id, answering what each write replaced."""

    def __init__(self) -> None:
        self.rows: dict[str, Submission] = {}

    async def record(
        self, tenant_id: str, kind: str, item_id: str, **fields: Any
    ) -> Submission | None:
        before = self.rows.get(item_id)
        self.rows[item_id] = Submission(
            kind,
            item_id,
            agent_id=fields.get("agent_id"),
            version=fields.get("version", before.version if before else None),
            size_bytes=fields.get("size_bytes", before.size_bytes if before else 0),
        )
        return before

    async def record_many(
        self, tenant_id: str, kind: str, items: list[tuple[str, dict[str, Any]]]
    ) -> int:
        return sum([await self.record(tenant_id, kind, i, **f) is None for i, f in items])

    async def get(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        return self.rows.get(item_id)

    async def release(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        row = self.rows.get(item_id)
        if row is None or not row.held:
            return None
        self.rows[item_id] = replace(row, released_at=datetime(2026, 12, 7, tzinfo=UTC))
        return row


DEFAULTS = Usage(memories=3, documents=2, document_bytes=100)


def intake(store: Store) -> tuple[Intake, Sink]:
    sink = Sink()
    return Intake(sink, Log(), Quotas(store, DEFAULTS)), sink


def memory(memory_id: str) -> Envelope[MemoryWriteRequested]:
    payload = MemoryWriteRequested(memory_id=memory_id, agent_id="agt_1", content="tea at five")
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id=T)


def document(doc_id: str, version: str, size: int) -> Envelope[DocumentSubmitted]:
    payload = DocumentSubmitted(
        document_id=doc_id,
        version=version,
        source="gateway",
        source_item_id=doc_id,
        name=doc_id,
        mime="text/plain",
        content_sha256="0" * 64,
        size_bytes=size,
        content_base64="",
    )
    return new_event(DOCUMENT_SUBMITTED, payload, tenant_id=T)


async def accept_memory(door: Intake, memory_id: str) -> None:
    await door.accept(memory(memory_id), "memory", memory_id, refused="retry")


async def accept_document(door: Intake, doc_id: str, version: str, size: int) -> None:
    event = document(doc_id, version, size)
    await door.accept(event, "document", doc_id, refused="retry", size_bytes=size, version=version)


async def test_the_write_past_the_memory_quota_is_refused_before_it_is_queued() -> None:
    store = Store()
    door, sink = intake(store)
    for n in range(3):
        await accept_memory(door, f"m{n}")
    with pytest.raises(Problem) as refused:
        await accept_memory(door, "m3")
    problem = refused.value
    assert (problem.status, problem.kind) == (403, "quota-exceeded")
    assert problem.extra == {"quota": "memories", "limit": 3, "used": 3, "requested": 1}
    assert len(sink.published) == 3


async def test_a_retried_write_counts_once() -> None:
    store = Store()
    door, _ = intake(store)
    for _ in range(3):
        await accept_memory(door, "m1")
    assert store.counters[T].memories == 1


async def test_a_retry_of_a_counted_write_is_accepted_at_the_limit() -> None:
    store = Store()
    door, sink = intake(store)
    for n in range(3):
        await accept_memory(door, f"m{n}")
    await accept_memory(door, "m2")
    assert len(sink.published) == 4 and store.counters[T].memories == 3


async def test_a_batch_is_checked_whole_and_counts_its_new_ids() -> None:
    store = Store()
    door, sink = intake(store)
    await accept_memory(door, "m0")
    events = [memory(f"m{n}") for n in range(3)]
    items: list[tuple[str, dict[str, Any]]] = [(f"m{n}", {}) for n in range(3)]
    with pytest.raises(Problem) as refused:
        await door.accept_many(events, "memory", items, tenant_id=T, refused="retry")
    assert refused.value.extra["requested"] == 3 and len(sink.published) == 1
    await door.accept_many(events[:2], "memory", items[:2], tenant_id=T, refused="retry")
    assert store.counters[T].memories == 2


async def test_documents_count_once_and_their_bytes_once_per_version() -> None:
    store = Store()
    door, _ = intake(store)
    await accept_document(door, "d1", "v1", 40)
    await accept_document(door, "d1", "v1", 40)
    await accept_document(door, "d1", "v2", 50)
    assert (store.counters[T].documents, store.counters[T].document_bytes) == (1, 90)
    with pytest.raises(Problem) as refused:
        await accept_document(door, "d2", "v1", 20)
    assert refused.value.extra["quota"] == "document_bytes"


async def test_a_new_version_at_the_document_limit_asks_only_for_its_bytes() -> None:
    store = Store({"documents": 1})
    door, _ = intake(store)
    await accept_document(door, "d1", "v1", 40)
    await accept_document(door, "d1", "v2", 50)
    with pytest.raises(Problem) as refused:
        await accept_document(door, "d1", "v3", 20)
    assert refused.value.extra["quota"] == "document_bytes"
    with pytest.raises(Problem) as refused:
        await accept_document(door, "d2", "v1", 1)
    assert refused.value.extra["quota"] == "documents"


async def test_a_deleted_memory_gives_its_quota_back_once() -> None:
    store = Store()
    door, _ = intake(store)
    for n in range(3):
        await accept_memory(door, f"m{n}")
    for _ in range(2):
        await door.release(T, "memory", "m1")
    await door.release(T, "memory", "unknown")
    assert store.counters[T].memories == 2
    await accept_memory(door, "m3")
    assert store.counters[T].memories == 3


async def test_a_deleted_document_gives_back_its_count_and_last_versions_bytes() -> None:
    store = Store()
    door, _ = intake(store)
    await accept_document(door, "d1", "v1", 40)
    await accept_document(door, "d1", "v2", 50)
    await door.release(T, "document", "d1")
    assert (store.counters[T].documents, store.counters[T].document_bytes) == (0, 40)
    await accept_document(door, "d1", "v2", 50)
    assert (store.counters[T].documents, store.counters[T].document_bytes) == (1, 90)


async def test_a_tenants_own_limit_wins_over_the_default() -> None:
    store = Store({"memories": 1})
    door, _ = intake(store)
    await accept_memory(door, "m1")
    with pytest.raises(Problem) as refused:
        await accept_memory(door, "m2")
    assert refused.value.extra["limit"] == 1


async def test_a_tenants_limits_are_remembered_for_a_while() -> None:
    store = Store()
    quotas = Quotas(store, DEFAULTS, limits_seconds=60)
    for _ in range(3):
        await quotas.admit(T, Usage(memories=1))
    assert store.asked_limits == 1


async def test_a_failed_count_does_not_fail_the_accepted_write() -> None:
    store = Store()
    store.fail_add = True
    door, sink = intake(store)
    await accept_memory(door, "m1")
    assert len(sink.published) == 1


async def test_writes_with_no_quota_are_not_checked() -> None:
    store = Store({"memories": 0, "documents": 0})
    door, sink = intake(store)
    await door.accept(memory("c1"), "conversation", "c1", refused="retry")
    assert len(sink.published) == 1 and store.asked_limits == 0


def test_what_a_write_asks_and_what_it_adds() -> None:
    assert demand_of("memory", 3) == Usage(memories=3)
    assert demand_of("document", 1, 10) == Usage(documents=1, document_bytes=10)
    assert demand_of("import", 5) == Usage()
    asked = Usage(documents=1, document_bytes=10)
    assert counted(asked, None, "v1") == asked
    assert counted(asked, Submission("document", "d1", version="v0"), "v1") == Usage(
        document_bytes=10
    )
    assert counted(asked, Submission("document", "d1", version="v1"), "v1") == Usage()
    assert counted(Usage(memories=1), Submission("memory", "m1"), None) == Usage()
    given_back = Submission("memory", "m1", released_at=datetime(2026, 12, 7, tzinfo=UTC))
    assert counted(Usage(memories=1), given_back, None) == Usage(memories=1)


def test_the_first_quota_overrun_is_named() -> None:
    limits = Usage(memories=10, documents=1, document_bytes=5)
    assert first_exceeded(limits, Usage(memories=9), Usage(memories=1)) is None
    over = first_exceeded(limits, Usage(memories=9), Usage(memories=2))
    assert over is not None and (over.quota, over.limit, over.used) == ("memories", 10, 9)
    assert first_exceeded(Usage(), Usage(memories=5), Usage()) is None


def test_overrides_replace_only_the_quotas_they_name() -> None:
    assert limits_for(DEFAULTS, {"memories": 7, "rate": 1}) == Usage(7, 2, 100)
    assert parse_override("documents=5") == ("documents", 5)
    for bad in ("memories", "bytes=4", "memories=-1", "memories=x"):
        with pytest.raises(ValueError):
            parse_override(bad)
