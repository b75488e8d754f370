"""Calls for documents, records and knowledge."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from engram_client import models
from engram_client.calls.base import Call, keyed, only_set, segment

# Documents


def upload_document(
    name: str, content: bytes | str, mime: str, *, multipart: bool
) -> Call[models.DocumentAccepted]:
    """JSON (`text` or `content_base64`) or multipart; retry-safe: keyed by name + content hash."""
    parse = models.DocumentAccepted.model_validate
    if multipart:
        raw = content.encode("utf-8") if isinstance(content, str) else content
        return Call(
            "POST",
            "/v1/documents",
            parse,
            data={"name": name, "mime": mime},
            files={"file": (name, raw, mime)},
            retry_safe=True,
        )
    body: dict[str, Any] = {"name": name, "mime": mime}
    if isinstance(content, str):
        body["text"] = content
    else:
        body["content_base64"] = base64.b64encode(content).decode("ascii")
    return Call("POST", "/v1/documents", parse, json=body, retry_safe=True)


def get_document(document_id: str) -> Call[models.Document]:
    """Status and versions of a document."""
    return Call(
        "GET",
        f"/v1/documents/{segment(document_id)}",
        models.Document.model_validate,
        retry_safe=True,
    )


def list_passages(
    document_id: str, *, after: int | None = None, limit: int | None = None
) -> Call[models.PassagePage]:
    """One page of the current version's passages, in order; follow `next_after`."""
    return Call(
        "GET",
        f"/v1/documents/{segment(document_id)}/passages",
        models.PassagePage.model_validate,
        params=only_set({"after": after, "limit": limit}),
        retry_safe=True,
    )


def delete_document(document_id: str) -> Call[models.PruneJobAccepted]:
    """Not retry-safe: a second delete starts a second job or answers 409 already-deleted."""
    return Call(
        "DELETE", f"/v1/documents/{segment(document_id)}", models.PruneJobAccepted.model_validate
    )


# Records


def import_records(
    record_type: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    source: str,
    key_field: str | None,
    idempotency_key: str | None,
) -> Call[models.ImportAccepted]:
    """Retry-safe: the gateway derives the import id from the idempotency key."""
    key, headers = keyed(idempotency_key)
    body: dict[str, Any] = {
        "record_type": record_type,
        "source": source,
        "rows": [dict(r) for r in rows],
        "idempotency_key": key,
    }
    if key_field is not None:
        body["key_field"] = key_field
    return Call(
        "POST",
        "/v1/records:import",
        models.ImportAccepted.model_validate,
        json=body,
        headers=headers,
        retry_safe=True,
    )


def get_import(import_id: str) -> Call[models.ImportStatus]:
    """An import's outcome."""
    return Call(
        "GET",
        f"/v1/records:import/{segment(import_id)}",
        models.ImportStatus.model_validate,
        retry_safe=True,
    )


def get_record(record_id: str) -> Call[models.Record]:
    """One record with revisions and lineage."""
    return Call(
        "GET", f"/v1/records/{segment(record_id)}", models.Record.model_validate, retry_safe=True
    )


def list_records(
    *,
    type: str | None = None,
    document_id: str | None = None,
    entity_id: str | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> Call[models.RecordPage]:
    """One page of records; follow `next_cursor`."""
    params = only_set(
        {
            "type": type,
            "document_id": document_id,
            "entity_id": entity_id,
            "cursor": cursor,
            "limit": limit,
        }
    )
    return Call(
        "GET", "/v1/records", models.RecordPage.model_validate, params=params, retry_safe=True
    )


# Knowledge


def get_entity(
    entity_id: str,
    *,
    include_withdrawn: bool = False,
    valid_at: str | None = None,
    as_of: str | None = None,
) -> Call[models.Entity]:
    """An entity's article and facts (`valid_at`: as true then; `as_of`: as known then; ISO
    dates or date-times)."""
    given = {"include_withdrawn": "true" if include_withdrawn else None}
    params = only_set({**given, "valid_at": valid_at, "as_of": as_of}) or None
    return Call(
        "GET",
        f"/v1/knowledge/entities/{segment(entity_id)}",
        models.Entity.model_validate,
        params=params,
        retry_safe=True,
    )


def list_entities(
    *, type: str | None = None, after: str | None = None, limit: int | None = None
) -> Call[models.EntityPage]:
    """One page of entities; follow `next_after`."""
    params = only_set({"type": type, "after": after, "limit": limit})
    return Call(
        "GET",
        "/v1/knowledge/entities",
        models.EntityPage.model_validate,
        params=params,
        retry_safe=True,
    )


def search_knowledge(
    query: str,
    *,
    top_k: int,
    min_score: float | None,
    mode: str | None = None,
    kinds: Sequence[str] | None = None,
    expand: int | None = None,
    valid_at: str | None = None,
    as_of: str | None = None,
) -> Call[models.KnowledgeSearch]:
    """A read despite the POST, so it is retry-safe; `kinds` (fact, article_section, passage)
    keeps only hits of those kinds; `expand` (1 or 2) adds related entities' facts; `valid_at`
    and `as_of` judge facts and sections as true or as known then."""
    body: dict[str, Any] = {"query": query, "top_k": top_k}
    body |= only_set({"valid_at": valid_at, "as_of": as_of})
    if expand is not None:
        body["expand"] = expand
    if min_score is not None:
        body["min_score"] = min_score
    if mode is not None:
        body["mode"] = mode
    if kinds:
        body["kinds"] = list(kinds)
    return Call(
        "POST",
        "/v1/knowledge/search",
        models.KnowledgeSearch.model_validate,
        json=body,
        retry_safe=True,
    )


def entity_relations(
    entity_id: str,
    *,
    direction: str | None = None,
    predicate: str | None = None,
    depth: int | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    valid_at: str | None = None,
    as_of: str | None = None,
) -> Call[models.RelationPage]:
    """One page of an entity's relations (`direction` out, in or both; `depth` 1-3; `valid_at`
    and `as_of` read them in time)."""
    params = only_set(
        {
            "direction": direction,
            "predicate": predicate,
            "depth": depth,
            "limit": limit,
            "cursor": cursor,
            "valid_at": valid_at,
            "as_of": as_of,
        }
    )
    return Call(
        "GET",
        f"/v1/knowledge/entities/{segment(entity_id)}/relations",
        models.RelationPage.model_validate,
        params=params,
        retry_safe=True,
    )


def find_paths(
    start: str, goal: str, *, max_depth: int | None = None, limit: int | None = None
) -> Call[models.Paths]:
    """The shortest paths between two entities; a read despite the POST."""
    body: dict[str, Any] = {"from": start, "to": goal, **only_set({"max_depth": max_depth})}
    body.update(only_set({"limit": limit}))
    return Call(
        "POST", "/v1/knowledge/paths", models.Paths.model_validate, json=body, retry_safe=True
    )


def list_contradictions(
    *, status: str | None = None, limit: int | None = None
) -> Call[list[models.Contradiction]]:
    """Contradictions, optionally only `open` or `resolved` ones."""
    return Call(
        "GET",
        "/v1/knowledge/contradictions",
        lambda b: [models.Contradiction.model_validate(c) for c in b["contradictions"]],
        params=only_set({"status": status, "limit": limit}),
        retry_safe=True,
    )


def assert_fact(entity_id: str, attribute: str, value: Any, reason: str) -> Call[models.FactEdit]:
    """A curator's value (key role `curator` or `admin`); not retry-safe: a repeat is a new
    revision of the same `human` record (same value, later time)."""
    return Call(
        "PUT",
        f"/v1/knowledge/entities/{segment(entity_id)}/facts/{segment(attribute)}",
        models.FactEdit.model_validate,
        json={"value": value, "reason": reason},
    )


def withdraw_fact(
    entity_id: str, attribute: str, reason: str, *, value: Any, has_value: bool
) -> Call[models.FactEdit]:
    """A curator's withdrawal of one value (of every value, without one): a value records still
    assert is contested, not removed."""
    body: dict[str, Any] = {"reason": reason}
    if has_value:
        body["value"] = value
    return Call(
        "DELETE",
        f"/v1/knowledge/entities/{segment(entity_id)}/facts/{segment(attribute)}",
        models.FactEdit.model_validate,
        json=body,
    )


def resolve_contradiction(
    contradiction_id: str, *, keep: str | None, value: Any, has_value: bool
) -> Call[models.Resolution]:
    """Not retry-safe: a repeat after success answers 409 already-resolved."""
    body: dict[str, Any] = {"keep": keep} if keep is not None else {}
    if has_value:
        body["value"] = value
    return Call(
        "POST",
        f"/v1/knowledge/contradictions/{segment(contradiction_id)}/resolve",
        models.Resolution.model_validate,
        json=body,
    )
