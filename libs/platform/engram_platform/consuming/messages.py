"""What a consumer passes between its steps: outcomes, prepared batches, handler shapes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engram_events import Envelope
from engram_events.payloads.dlq import DeadLetter
from engram_events.registry import RECIPIENT_HEADER
from engram_platform.consuming.parking import ParkedInput

Published = Sequence[Envelope[Any]] | None
Handler = Callable[[Envelope[Any]], Awaitable[Published]]
BatchResult = Published | BaseException
"""One input's answer from a batch handler: the events to publish, or why it failed."""
BatchHandler = Callable[[list[Envelope[Any]]], Awaitable[Sequence[BatchResult]]]
DeadLetterHook = Callable[[Envelope[Any], DeadLetter], Awaitable[Published]]
"""What the owning service does when one of its inputs is dead-lettered: mark its item failed
(idempotently: a replayed batch runs it again) and return any events that announce it."""
Work = tuple[int, Any, Envelope[Any]]
"""One input to handle: its place in the fetch, its Kafka record, its decoded event."""


class Outcome(StrEnum):
    """What happened to one message."""

    APPLIED = "applied"
    DUPLICATE = "duplicate"
    IGNORED = "ignored"
    DEAD_LETTERED = "dead_lettered"
    PARKED = "parked"
    """Left in the parked lane: its attempt failed transiently, or an input of its key is
    parked ahead of it; the retrier runs it later."""


@dataclass
class PreparedBatch:
    """A decoded batch whose look-ahead has been told: what is left to handle, and the
    outcomes already known (ignored, dead-lettered, duplicate)."""

    outcomes: list[Outcome | None]
    work: list[Work] = field(default_factory=list)
    finished: list[tuple[str, str, float]] = field(default_factory=list)
    dead_lettered: list[tuple[Envelope[Any], DeadLetter]] = field(default_factory=list)
    """Undecodable inputs whose events were salvaged, for their routes' dead-letter hooks."""
    bulk: bool = False
    """Every input came by the bulk lane: handled in parts that yield to interactive batches."""


@dataclass
class Handled:
    """A fetch handled and its events delivered: each message's outcome, and the inputs to
    mark applied when it is settled."""

    outcomes: list[Outcome]
    applied: list[tuple[str, str]]
    requests: int = 0
    """Requests it published that another service answers back (see `catalog.ANSWERED`)."""


@dataclass
class Pending:
    """Work a batch accumulates before its one durable step."""

    outbox_docs: list[dict[str, Any]] = field(default_factory=list)
    applied: list[tuple[str, str]] = field(default_factory=list)
    parked: list[ParkedInput] = field(default_factory=list)
    parked_keys: set[str] = field(default_factory=set)
    requests: int = 0


def declared_type(record: Any) -> str | None:
    """The `event_type` header the sender puts on every event: enough to pass over an event
    this service does not handle without parsing it (an embedding's vectors are most of its
    topic's bytes). A message without the header is decoded as before."""
    for name, value in getattr(record, "headers", None) or ():
        if name == "event_type" and isinstance(value, bytes | bytearray):
            return value.decode("utf-8", "replace")
    return None


def addressed_elsewhere(record: Any, service: str) -> bool:
    """Whether the record's `recipient` header names another service: an answer to another
    requester on a topic both read, passed over unparsed."""
    for name, value in getattr(record, "headers", None) or ():
        if name == RECIPIENT_HEADER and isinstance(value, bytes | bytearray):
            return value.decode("utf-8", "replace") != service
    return False


def text_headers(record: Any) -> dict[str, str]:
    """Kafka headers as text, for W3C context extraction."""
    return {
        k: v.decode("latin-1")
        for k, v in (getattr(record, "headers", None) or ())
        if isinstance(v, bytes | bytearray)
    }
