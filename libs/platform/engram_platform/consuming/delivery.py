"""How a consumer's answers leave, chosen when it is built.

`Outboxed` (the default) stages a batch's events in the outbox and the relay publishes them.
`Direct` is for a service that keeps no state: a batch's events are published (acks=all)
before its inputs are marked applied; a crash in between sends the same event ids again, and
consumers skip ids they applied. `Pipelined` is `Direct` for a model fed by a look-ahead: no
inputs recorded, answers sent every `every` inputs, and the next fetch read while this one's
last answers go out (see `overlap`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from engram_platform.broker import Broker
from engram_platform.idempotency import AppliedEvents, UnrecordedEvents
from engram_platform.outbox import Outbox

Deliver = Callable[[list[dict[str, Any]]], Awaitable[Any]]


@dataclass(frozen=True)
class Outboxed:
    """Stage the events in the outbox; the relay publishes them."""


@dataclass(frozen=True)
class Direct:
    """Publish the events before marking the inputs applied.

    With `every`, batch-routed runs are cut at that many inputs and each part's events are
    sent while the next part is handled, so answers leave in a stream, not once per fetch.
    Without `record_applied`, inputs are neither looked up nor marked: for handlers whose only
    effect is those events, a replay is recomputation, not a second effect.
    """

    every: int | None = None
    record_applied: bool = True


@dataclass(frozen=True)
class Pipelined:
    """Publish every `every` inputs, record nothing, and overlap consecutive fetches: a fetch
    read again is recomputed, not applied twice."""

    every: int


Delivery = Outboxed | Direct | Pipelined
OUTBOXED = Outboxed()
"""The default delivery."""


@dataclass(frozen=True)
class Plan:
    """A delivery turned into what the consumer runs."""

    deliver: Deliver
    every: int | None
    applied: AppliedEvents | UnrecordedEvents
    overlapped: bool


def plan(delivery: Delivery, *, outbox: Outbox, broker: Broker, db: Any, service: str) -> Plan:
    """Where a batch's events go, how often, and whether its inputs are recorded."""
    recorded = AppliedEvents(db, service)
    if isinstance(delivery, Outboxed):
        return Plan(outbox.stage_entries, None, recorded, overlapped=False)
    if isinstance(delivery, Direct):
        applied = recorded if delivery.record_applied else UnrecordedEvents()
        return Plan(broker.sender.send, delivery.every, applied, overlapped=False)
    return Plan(broker.sender.send, delivery.every, UnrecordedEvents(), overlapped=True)
