"""How an imported tenant's ids are named: stable per source and target, so a re-run finds what
an earlier run wrote instead of writing it twice (pure)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from engram_events.content import PROBLEMS, ContentLimits, content_problem
from engram_events.payloads.embeddings import VectorProvenance
from engram_events.payloads.memories import Author, MemoryWrite
from engram_events.payloads.records import FactEditRequested, HumanEdit, RestoredRecord
from engram_gateway.domain.export_format import ExportRefused
from engram_gateway.domain.ids import memory_id_for

COPIED = ("content", "type", "metadata", "user_id", "session_id", "expires_at")
"""What a memory line carries into its new tenant as written; `supersedes` is mapped to the
earlier version's new id by the import, `derived_from` names the source tenant's records and
is left behind."""


MAX_EDIT_REASON = 500


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def imported_agent_id(target_tenant: str, source_tenant: str, source_agent: str) -> str:
    """The agent an import of `source_agent` creates in `target_tenant` (the same every run)."""
    return f"agt_{_digest('import', target_tenant, source_tenant, source_agent)[:24]}"


def import_key(source_tenant: str, source_memory: str) -> str:
    """The idempotency key an imported memory is written with (the same every run)."""
    return f"import:{_digest(source_tenant, source_memory)[:40]}"


def imported_memory_id(target_tenant: str, agent_id: str, key: str) -> str:
    """The id the write path gives the memory written with `key` under `agent_id`."""
    return memory_id_for(target_tenant, agent_id, key)


def memory_write(item: dict[str, Any], limits: ContentLimits, line: int) -> MemoryWrite:
    """A memory line as the write it becomes (duplicates allowed: the source already chose to
    keep them); a line the write path would refuse is refused here, before any write."""
    fields = {name: item[name] for name in COPIED if item.get(name) is not None}
    try:
        write = MemoryWrite(allow_duplicate=True, **fields)
    except ValidationError as bad:
        first = bad.errors()[0]
        where = ".".join(map(str, first["loc"])) or "memory"
        raise ExportRefused(f"memory {where}: {first['msg']}", line) from None
    problem = content_problem(write.content, limits)
    if problem is not None:
        raise ExportRefused(f"memory content {PROBLEMS[problem]}", line)
    for name in ("memory_id", "agent_id"):
        if not isinstance(item.get(name), str):
            raise ExportRefused(f"memory line without its {name}", line)
    return write


def created_at(item: dict[str, Any], line: int) -> datetime | None:
    """When the exported memory was made (the import keeps it), or None in an older file."""
    raw = item.get("created_at")
    if raw is None:
        return None
    try:
        when = datetime.fromisoformat(str(raw))
    except ValueError:
        raise ExportRefused("memory created_at is not an ISO time", line) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def imported_document_id(target_tenant: str, source_tenant: str, document_id: str) -> str:
    """The id a source document's records name in the target tenant (the same every run)."""
    return f"doc_{_digest('import', target_tenant, source_tenant, document_id)[:24]}"


def restored_source_item(
    target_tenant: str, source_tenant: str, item: dict[str, Any]
) -> tuple[str, str | None]:
    """(source item, document id) of a record in the target: a document's records follow its
    new id; another source (an import's `import:<source>`) keeps its name."""
    document = item["lineage"].get("document_id")
    if document is None:
        return str(item["source_item"]), None
    new = imported_document_id(target_tenant, source_tenant, document)
    return new if item["source_item"] == document else str(item["source_item"]), new


def restored_record(item: dict[str, Any], line: int) -> RestoredRecord:
    """A record line as the record it restores; a line extraction would refuse is refused here."""
    if not isinstance(item.get("lineage"), dict) or not isinstance(item.get("source_item"), str):
        raise ExportRefused("record line without its lineage and source_item", line)
    try:
        return RestoredRecord(
            source_record_id=item.get("record_id"),
            record_type=item.get("record_type"),
            entity_id=item.get("entity_id"),
            attributes=item.get("attributes"),
            locator=item["lineage"].get("locator") or "",
        )
    except ValidationError as bad:
        first = bad.errors()[0]
        where = ".".join(map(str, first["loc"])) or "record"
        raise ExportRefused(f"record {where}: {first['msg']}", line) from None


def curator_edit(item: dict[str, Any], line: int) -> FactEditRequested | None:
    """A curator's record as the edit that makes it again (None for any other record): the same
    key, action, reason and time, so the target's record and its facts match."""
    edit = item["lineage"].get("edit")
    if edit is None:
        return None
    attributes = item.get("attributes")
    if not isinstance(attributes, dict) or len(attributes) != 1:
        raise ExportRefused("a curator's record holds exactly one attribute", line)
    [(attribute, value)] = attributes.items()
    try:
        return FactEditRequested(
            entity_id=item.get("entity_id"),
            attribute=attribute,
            value=value,
            edit=HumanEdit.model_validate(edit),
        )
    except ValidationError as bad:
        first = bad.errors()[0]
        where = ".".join(map(str, first["loc"])) or "edit"
        raise ExportRefused(f"curator's record {where}: {first['msg']}", line) from None


def restore_id(
    target_tenant: str, source_tenant: str, source_item: str, record_ids: list[str]
) -> str:
    """A restore batch's id: derived from the records it holds, so a re-run repeats it."""
    return f"rst_{_digest(target_tenant, source_tenant, source_item, *record_ids)[:32]}"


def edit_of(item: dict[str, Any], importer: Author, line: int) -> tuple[Author, str | None]:
    """Who made an exported version and why (an edit's reason): the source's key when the line
    names one, else the importing key."""
    reason = item.get("edit_reason") or None
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_EDIT_REASON):
        raise ExportRefused(f"memory edit_reason is not text of at most {MAX_EDIT_REASON}", line)
    try:
        author = Author.model_validate(item["author"]) if item.get("author") else importer
    except ValidationError:
        author = importer
    return author, reason


def carried_vector(
    item: dict[str, Any], line: int
) -> tuple[list[float] | None, VectorProvenance | None]:
    """A memory line's stored vector and what made it (both or neither); the memory service
    keeps it when its embedder is the one named, and embeds the content again otherwise."""
    vector, provenance = item.get("vector"), item.get("vector_provenance")
    if vector is None and provenance is None:
        return None, None
    if not isinstance(vector, list) or not all(isinstance(x, int | float) for x in vector):
        raise ExportRefused("memory vector is not a list of numbers", line)
    try:
        made_by = VectorProvenance.model_validate(provenance)
    except ValidationError:
        raise ExportRefused(
            "memory vector_provenance is not an embedder's provenance", line
        ) from None
    if len(vector) != made_by.dimension:
        raise ExportRefused("memory vector's length is not its embedder's dimension", line)
    return [float(x) for x in vector], made_by
