"""Accepting a client's write: within the tenant's quotas, its event is in Kafka (acks=all), then
the submission is noted so its status URL answers `pending` until the owning service has it,
and what it adds is counted against the quotas (once: a retry of a noted id adds nothing)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from engram_events import Envelope
from engram_gateway.domain.quotas import counted, demand_of, given_back
from engram_gateway.ports import EventSink, SubmissionLog
from engram_gateway.service.quotas import Quotas
from engram_platform.problems import Problem


async def publish_or_503(publishing: Awaitable[None], detail: str) -> None:
    """Await a publish; a broker failure is a 503 the client may retry, never a 500 or a 202."""
    try:
        await publishing
    except Exception:
        raise Problem(503, "broker-unavailable", detail) from None


class Intake:
    """Publishes a write's events, then remembers the write; nothing is noted that Kafka lacks."""

    def __init__(
        self, events: EventSink, submissions: SubmissionLog, quotas: Quotas | None = None
    ) -> None:
        self.events = events
        self.submissions = submissions
        self.quotas = quotas

    async def accept(
        self,
        event: Envelope[Any],
        kind: str,
        item_id: str,
        *,
        refused: str,
        size_bytes: int = 0,
        **fields: Any,
    ) -> None:
        """One write; `refused` is the 503's detail when the broker does not take the event,
        `size_bytes` what a document's bytes ask of the quota."""
        tenant_id = event.tenant_id
        demand = demand_of(kind, 1, size_bytes)
        if self.quotas is not None:
            try:
                await self.quotas.admit(tenant_id, demand)
            except Problem:
                noted = await self.submissions.get(tenant_id, kind, item_id)
                if noted is None:
                    raise
                await self.quotas.admit(tenant_id, counted(demand, noted, fields.get("version")))
        await publish_or_503(self.events.publish(event), refused)
        if size_bytes:
            fields = {**fields, "size_bytes": size_bytes}
        previous = await self.submissions.record(tenant_id, kind, item_id, **fields)
        if self.quotas is not None:
            added = counted(demand, previous, fields.get("version"))
            if added.any():
                await self.quotas.count(tenant_id, added)

    async def accept_many(
        self,
        events: Sequence[Envelope[Any]],
        kind: str,
        items: list[tuple[str, dict[str, Any]]],
        *,
        tenant_id: str,
        refused: str,
    ) -> None:
        """A request's writes with one publish; `items` are their ids and noted fields. The
        quota is checked for the whole request: all of it fits, or none of it is queued."""
        if self.quotas is not None:
            await self.quotas.admit(tenant_id, demand_of(kind, len(items)))
        await publish_or_503(self.events.publish_many(events), refused)
        new = await self.submissions.record_many(tenant_id, kind, items)
        if self.quotas is not None and new:
            await self.quotas.count(tenant_id, demand_of(kind, new))

    async def release(self, tenant_id: str, kind: str, item_id: str) -> None:
        """A deleted write gives its quota back, once (only what this gateway counted)."""
        released = await self.submissions.release(tenant_id, kind, item_id)
        if released is not None and self.quotas is not None:
            back = given_back(released)
            if back.any():
                await self.quotas.count(tenant_id, back)
