"""What is left of an event that failed validation: its envelope, and its payload without the
invalid fields, so the item it names can still be marked failed and its tenant shown the letter."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from engram_events import Envelope, PoisonMessage
from engram_events.codec import typed_envelope
from engram_events.envelope import RawEnvelope
from engram_events.registry import event_type_of


@dataclass(frozen=True)
class Salvaged:
    """The envelope's ids (for the dead letter), and the event when its payload validates
    without the fields that failed (for the route's dead-letter hook)."""

    fields: dict[str, str | None]
    envelope: Envelope[Any] | None


def salvage(raw: bytes | None) -> Salvaged:
    """The ids of an undecodable event, and the event with its invalid payload fields dropped
    (their defaults instead), when that validates; nothing when even the envelope is invalid."""
    try:
        raw_envelope = RawEnvelope.model_validate(json.loads(raw or b""))
        event_type = event_type_of(raw_envelope.event_type)
    except (ValueError, PoisonMessage):
        return Salvaged({}, None)
    fields: dict[str, str | None] = {
        "event_id": str(raw_envelope.event_id),
        "event_type": raw_envelope.event_type,
        "tenant_id": raw_envelope.tenant_id,
    }
    payload = dict(raw_envelope.payload)
    try:
        typed = event_type.payload.model_validate(payload)
    except ValidationError as exc:
        invalid = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
        try:
            typed = event_type.payload.model_validate(
                {k: v for k, v in payload.items() if k not in invalid}
            )
        except ValidationError:
            return Salvaged(fields, None)
    rest = raw_envelope.model_dump(exclude={"payload"})
    return Salvaged(fields, typed_envelope(event_type.payload)(**rest, payload=typed))
