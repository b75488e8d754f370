"""A write request, the pure part: the row it opens and how a replay or a duplicate shows."""

from __future__ import annotations

from typing import Any

from engram_events import Envelope
from engram_events.content import content_sha256
from engram_events.memory_filter import metadata_instants
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.memories import MemoryWriteRequested
from engram_memory.domain.rows import MemoryRow

CONTENT_FIELDS = ("content", "metadata", "metadata_at", "edit_reason")
"""What a withdrawn row loses: only status, ids and hashes remain (an edit's reason is a
person's free text, so it goes with the content)."""

Opening = tuple[int, dict[str, Any], str, str | None]
"""One row to open: the input's index, the row's fields, its status and the rejection reason."""


def row_fields(event: Envelope[MemoryWriteRequested]) -> dict[str, Any]:
    """What a memory's row records from its write request (content is added when kept)."""
    request = event.payload
    return {
        "memory_id": request.memory_id,
        "agent_id": request.agent_id,
        "type": request.type,
        "derived_from": list(request.derived_from),
        "supersedes": request.supersedes,
        "idempotency_key": request.idempotency_key,
        "user_id": request.user_id,
        "session_id": request.session_id,
        **({"extracted_by": request.extracted_by.model_dump()} if request.extracted_by else {}),
        **({"author": request.author.model_dump()} if request.author else {}),
        "content_sha256": content_sha256(request.content),
        "content_chars": len(request.content),
        "written_by": str(event.event_id),
        "created_at": request.created_at or event.occurred_at,
        **({"expires_at": request.expires_at} if request.expires_at is not None else {}),
    }


def dead_lettered_fields(
    event: Envelope[MemoryWriteRequested], letter: DeadLetter
) -> dict[str, Any]:
    """The row a dead-lettered write leaves: ids, hashes, the reason and when; never the
    content or metadata, which may be what the database refused."""
    kept = {k: v for k, v in row_fields(event).items() if k != "extracted_by"}
    return {**kept, "reason": letter.item_reason(), "dead_lettered_at": letter.failed_at}


def content_fields(request: MemoryWriteRequested) -> dict[str, Any]:
    """What a pending row keeps until it is withdrawn: the content, its metadata and, for an
    edit, why it was made."""
    return {
        "content": request.content,
        "metadata": request.metadata,
        "metadata_at": metadata_instants(request.metadata),
        **({"edit_reason": request.reason} if request.reason is not None else {}),
    }


def still_to_store(rows: dict[str, MemoryRow], fields: dict[str, Any]) -> bool:
    """A replay after the row was written but before its events were staged (the process died
    mid-batch) stages the same embedding request again: for a row still pending, or it stays
    pending for ever; for one this same event's single-write pass already stored, so the
    store's after-steps (supersession, retention, `memory.stored`) run once more (a later
    write of the same memory, an idempotent retry, is not stored again)."""
    row = rows.get(fields["memory_id"])
    if row is None or row.content_sha256 != fields["content_sha256"]:
        return False
    if row.status == "pending":
        return True
    stored = row.status in ("active", "superseded")
    return stored and row.written_by == fields["written_by"]


def settled_at_birth(
    rows: dict[str, MemoryRow], fields: dict[str, Any], status: str
) -> MemoryRow | None:
    """A replay after a row was written rejected or withdrawn at birth but before its event was
    staged (the process died mid-batch): the row as written, to announce again under the same
    event id; None when the row is not the one this very event opened."""
    row = rows.get(fields["memory_id"])
    if row is None or status == "pending" or row.status != status:
        return None
    if row.written_by != fields["written_by"]:
        return None
    mark = row.reason if status == "rejected" else row.withdrawn_reason
    named = fields.get("reason" if status == "rejected" else "withdrawn_reason")
    same_content = row.content_sha256 == fields["content_sha256"]
    return row if same_content and mark == named else None


def as_duplicate(entry: Opening, duplicates: dict[str, str]) -> Opening:
    """A pending write that duplicates a live memory becomes a rejected row naming it, without
    the content (the live memory already holds it)."""
    i, fields, status, _ = entry
    holder = duplicates.get(fields["memory_id"])
    if status != "pending" or holder is None:
        return entry
    kept = {k: v for k, v in fields.items() if k not in CONTENT_FIELDS}
    return i, {**kept, "reason": "duplicate", "duplicate_of": holder}, "rejected", "duplicate"
