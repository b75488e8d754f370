"""Every event type with its payload model, topic, key and supported schema versions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from engram_events.errors import UnknownEventType

P = TypeVar("P", bound=BaseModel)
RECIPIENT_HEADER = "recipient"
"""The Kafka header naming the service an addressed event is for (see `EventType.recipient`)."""


@dataclass(frozen=True)
class EventType(Generic[P]):
    """A named event: its payload model, the topic it travels on and how it is keyed."""

    name: str
    payload: type[P]
    topic: str
    key: Callable[[P], str]
    versions: frozenset[int] = field(default_factory=lambda: frozenset({1}))
    recipient: Callable[[P], str] | None = None
    """The one service an event is addressed to, sent as its `recipient` header, so the other
    readers of its topic pass over it unparsed (an embedding's vectors are most of its bytes)."""

    @property
    def current_version(self) -> int:
        """The version producers write."""
        return max(self.versions)


EVENT_TYPES: dict[str, EventType[Any]] = {}


def register(event_type: EventType[P]) -> EventType[P]:
    """Add an event type to the contract; names are unique."""
    if event_type.name in EVENT_TYPES:
        raise ValueError(f"event type {event_type.name!r} registered twice")
    EVENT_TYPES[event_type.name] = event_type
    return event_type


def event_type_of(name: str) -> EventType[Any]:
    """Look an event type up by name, or raise the typed error consumers dead-letter."""
    try:
        return EVENT_TYPES[name]
    except KeyError:
        raise UnknownEventType(f"unknown event type {name!r}") from None
