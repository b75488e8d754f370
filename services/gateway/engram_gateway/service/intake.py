"""Accepting a client's write: its event is in Kafka (acks=all), then the submission is noted so
its status URL answers `pending` until the owning service has it."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from engram_events import Envelope
from engram_gateway.ports import EventSink, SubmissionLog
from engram_platform.problems import Problem


async def publish_or_503(publishing: Awaitable[None], detail: str) -> None:
    """Await a publish; a broker failure is a 503 the client may retry, never a 500 or a 202."""
    try:
        await publishing
    except Exception:
        raise Problem(503, "broker-unavailable", detail) from None


class Intake:
    """Publishes a write's events, then remembers the write; nothing is noted that Kafka lacks."""

    def __init__(self, events: EventSink, submissions: SubmissionLog) -> None:
        self.events = events
        self.submissions = submissions

    async def accept(
        self,
        event: Envelope[Any],
        kind: str,
        item_id: str,
        *,
        refused: str,
        **fields: Any,
    ) -> None:
        """One write; `refused` is the 503's detail when the broker does not take the event."""
        await publish_or_503(self.events.publish(event), refused)
        await self.submissions.record(event.tenant_id, kind, item_id, **fields)

    async def accept_many(
        self,
        events: Sequence[Envelope[Any]],
        kind: str,
        items: list[tuple[str, dict[str, Any]]],
        *,
        tenant_id: str,
        refused: str,
    ) -> None:
        """A request's writes with one publish; `items` are their ids and noted fields."""
        await publish_or_503(self.events.publish_many(events), refused)
        await self.submissions.record_many(tenant_id, kind, items)
