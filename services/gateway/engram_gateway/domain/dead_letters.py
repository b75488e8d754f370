"""What a tenant is shown of a dead letter: ids, the failure's type and content-free reason, and
the item the failed input named; never the message, its metadata or the raw error text."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram_events.payloads.dlq import DeadLetter


@dataclass(frozen=True)
class Letter:
    """One dead letter and where it sits on the DLQ topic (its stable id)."""

    partition: int
    offset: int
    letter: DeadLetter
    replayed_at: datetime | None = None

    @property
    def letter_id(self) -> str:
        return f"{self.partition}-{self.offset}"


ITEM_FIELDS = (
    ("memory_id", "memory"),
    ("conversation_id", "conversation"),
    ("document_id", "document"),
    ("import_id", "import"),
    ("prune_job_id", "prune_job"),
    ("record_id", "record"),
)
"""Payload fields naming the item an event is about, most specific first."""


def named_item(letter: DeadLetter) -> dict[str, str] | None:
    """The item the dead-lettered event names (`{"type", "id"}`), read from its payload's ids."""
    try:
        body = json.loads(base64.b64decode(letter.value_base64, validate=True))
    except (binascii.Error, ValueError):
        return None
    payload = body.get("payload") if isinstance(body, dict) else None
    if not isinstance(payload, dict):
        return None
    for field, kind in ITEM_FIELDS:
        value = payload.get(field)
        if isinstance(value, str) and value:
            return {"type": kind, "id": value[:256]}
    return None


def tenant_view(letter_id: str, letter: DeadLetter, replayed: bool) -> dict[str, Any]:
    """One dead letter as its tenant sees it."""
    return {
        "letter_id": letter_id,
        "event_id": letter.event_id,
        "event_type": letter.event_type,
        "consumer": letter.consumer,
        "error_type": letter.error_type,
        "reason": letter.reason or letter.error_type,
        "attempts": letter.attempts,
        "failed_at": letter.failed_at.isoformat(),
        "item": named_item(letter),
        "replayed": replayed,
    }
