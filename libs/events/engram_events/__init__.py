"""Engram's event contract: the envelope, every event type, and topic names."""

from engram_events import catalog
from engram_events.codec import decode, derive_event_id, encode, new_event
from engram_events.envelope import Envelope
from engram_events.errors import (
    MalformedEvent,
    PoisonMessage,
    UnknownEventType,
    UnsupportedSchemaVersion,
)
from engram_events.registry import EVENT_TYPES, EventType, event_type_of
from engram_events.topics import ALL_TOPICS, COMPACTED_TOPICS, Topics, topic_name

__all__ = [
    "ALL_TOPICS",
    "COMPACTED_TOPICS",
    "EVENT_TYPES",
    "Envelope",
    "EventType",
    "MalformedEvent",
    "PoisonMessage",
    "Topics",
    "UnknownEventType",
    "UnsupportedSchemaVersion",
    "catalog",
    "decode",
    "derive_event_id",
    "encode",
    "event_type_of",
    "new_event",
    "topic_name",
]
