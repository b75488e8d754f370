"""A curator's fact edits: checked against the key's role, then published (acks=all) for
extraction to keep as records of source `human`, which enrichment weighs like any record."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from engram_events import new_event
from engram_events.catalog import FACT_EDIT_REQUESTED
from engram_events.ids import Scalar
from engram_events.payloads.records import EditAction, FactEditRequested, HumanEdit
from engram_gateway.domain.access import may_curate
from engram_gateway.domain.model import Caller
from engram_gateway.ports import EventSink
from engram_gateway.service.intake import publish_or_503
from engram_platform.problems import Problem


def _now() -> datetime:
    return datetime.now(UTC)


class Curation:
    """Asserting and withdrawing facts, for keys with the `curator` or `admin` role."""

    def __init__(self, events: EventSink, now: Callable[[], datetime] = _now) -> None:
        self.events = events
        self.now = now

    async def edit(
        self,
        caller: Caller,
        entity_id: str,
        attribute: str,
        action: EditAction,
        reason: str,
        value: Scalar = None,
    ) -> FactEditRequested:
        """Publish the edit, carrying the caller's key id, the time and the reason; 403 for a
        key that may not curate."""
        if not may_curate(caller.roles):
            raise Problem(
                403, detail="editing facts needs a key with the 'curator' or 'admin' role"
            )
        payload = FactEditRequested(
            entity_id=entity_id,
            attribute=attribute,
            value=value,
            edit=HumanEdit(key_id=caller.key_id, action=action, reason=reason, at=self.now()),
        )
        event = new_event(FACT_EDIT_REQUESTED, payload, tenant_id=caller.tenant_id)
        await publish_or_503(self.events.publish(event), "the edit could not be queued; retry")
        return payload
