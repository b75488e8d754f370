"""The gateway's audit trail: an entry per action before the answer (503 when it cannot be
written), one entry per retried idempotent action, and one listing over both logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from engram_gateway.domain.model import Caller
from engram_gateway.service.audit import AUDIT_QUERY_PATH, AuditTrail
from engram_platform.audit import (
    SYSTEM_ACTOR,
    AuditEntry,
    AuditPageRequest,
    AuditQuery,
    audit_time,
    decode_cursor,
)
from engram_platform.problems import Problem
from tests.support.audit_fakes import AuditEntries

pytestmark = pytest.mark.unit

START = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
ADMIN = Caller(tenant_id="t", key_id="k_admin", roles=("admin",))


class Clock:
    """A second later at each reading."""

    def __init__(self) -> None:
        self.at = START

    def __call__(self) -> datetime:
        self.at += timedelta(seconds=1)
        return self.at


class MemoryAudit:
    """The memory service's internal audit route over its own entries; calls counted."""

    def __init__(self) -> None:
        self.entries = AuditEntries()
        self.calls = 0
        self.status = 200

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kw: Any
    ) -> httpx.Response:
        assert (service, method, path) == ("memory", "POST", AUDIT_QUERY_PATH)
        self.calls += 1
        if self.status != 200:
            return httpx.Response(self.status)
        query = AuditPageRequest.model_validate(kw["json"]).query()
        found = await self.entries.page(tenant_id, query)
        return httpx.Response(200, json={"entries": [e.model_dump(mode="json") for e in found]})

    async def expire(self, memory_id: str, at: datetime) -> None:
        await self.entries.record(
            [
                AuditEntry(
                    entry_id=f"aud_{memory_id}",
                    tenant_id="t",
                    at=audit_time(at),
                    actor=SYSTEM_ACTOR,
                    action="memory.expired",
                    target={"agent_id": "a1", "memory_id": memory_id},
                )
            ]
        )


def world() -> tuple[AuditTrail, AuditEntries, MemoryAudit]:
    store, memory = AuditEntries(), MemoryAudit()
    return AuditTrail(store, memory, now=Clock()), store, memory


async def test_an_entry_names_the_key_its_role_and_the_ids_and_hashes_the_reason() -> None:
    trail, store, _ = world()
    entry = await trail.record(
        ADMIN, "memory.edited", {"agent_id": "a1", "memory_id": "m1"}, reason="typo in name"
    )
    assert (entry.actor.key_id, entry.actor.role) == ("k_admin", "admin")
    assert entry.target == {"agent_id": "a1", "memory_id": "m1"}
    assert entry.reason_sha256 is not None and "typo" not in entry.model_dump_json()
    assert list(store.entries.values()) == [entry]


async def test_a_retried_idempotent_action_is_one_entry_and_others_are_each_one() -> None:
    trail, store, _ = world()
    for _ in range(2):
        await trail.record(ADMIN, "key.revoked", {"key_id": "k2"}, once_per=("k2",))
        await trail.record(ADMIN, "retention.set", {"agent_id": "a1"}, counts={"rules": 1})
    assert len(store.of("key.revoked")) == 1 and len(store.of("retention.set")) == 2


async def test_an_entry_that_cannot_be_written_fails_the_request_with_a_503() -> None:
    trail = AuditTrail(AuditEntries(failing=True), MemoryAudit(), now=Clock())
    with pytest.raises(Problem) as refused:
        await trail.record(ADMIN, "key.created", {"key_id": "k3"})
    assert refused.value.status == 503 and refused.value.kind == "audit-unavailable"


async def test_pages_walk_both_logs_newest_first_without_gaps_or_repeats() -> None:
    trail, _, memory = world()
    for n in range(4):
        await trail.record(ADMIN, "key.created", {"key_id": f"k{n}"})
        await memory.expire(f"m{n}", trail.now())
    seen: list[AuditEntry] = []
    cursor = None
    while True:
        before = None if cursor is None else decode_cursor(cursor)
        page, cursor = await trail.page("t", AuditQuery(limit=3, before=before))
        seen += page
        if cursor is None:
            break
    assert len(seen) == 8 and len({e.entry_id for e in seen}) == 8
    assert [e.at for e in seen] == sorted((e.at for e in seen), reverse=True)
    assert {e.action for e in seen[:2]} == {"key.created", "memory.expired"}


async def test_filters_reach_both_logs_and_a_log_that_cannot_match_is_not_asked() -> None:
    trail, _, memory = world()
    await trail.record(ADMIN, "key.created", {"key_id": "k1"})
    await memory.expire("m1", trail.now())
    page, cursor = await trail.page("t", AuditQuery(limit=10, actions=("key.created",)))
    assert [e.action for e in page] == ["key.created"] and cursor is None
    assert memory.calls == 0
    page, _ = await trail.page("t", AuditQuery(limit=10, target="m1"))
    assert [e.target["memory_id"] for e in page] == ["m1"]
    page, _ = await trail.page("t", AuditQuery(limit=10, since=trail.now()))
    assert page == []


async def test_a_memory_service_that_cannot_answer_is_a_503_not_half_a_log() -> None:
    trail, _, memory = world()
    memory.status = 500
    with pytest.raises(Problem) as refused:
        await trail.page("t", AuditQuery(limit=10))
    assert refused.value.status == 503
