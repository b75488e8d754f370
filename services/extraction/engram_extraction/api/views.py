"""Records as the internal API shows them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram_extraction.domain.heads import RecordHead


def _lineage(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """Where a record came from; `model` (the id the endpoint reported) only for LLM rows, and
    `passage_ids` only for rows read from passages, `edit` only for a curator's (source `human`),
    `type_definition` (whose definition of the type, which version) only for a declared type."""
    stored = stored or {}
    lineage = {
        "document_id": stored.get("document_id"),
        "document_version": stored.get("document_version"),
        "locator": stored.get("locator", ""),
        "source_item_id": stored.get("source_item_id"),
    }
    if stored.get("model"):
        lineage["model"] = stored["model"]
    if stored.get("passage_ids"):
        lineage["passage_ids"] = list(stored["passage_ids"])
    if stored.get("edit"):
        lineage["edit"] = stored["edit"]
    if stored.get("type_definition"):
        lineage["type_definition"] = stored["type_definition"]
    return lineage


def record_view(head: RecordHead) -> dict[str, Any]:
    """A record as the API shows it: current content, lineage and (when read) its history."""
    view: dict[str, Any] = {
        "record_id": head.record_id,
        "record_type": head.record_type,
        "entity_id": head.entity_id,
        "status": head.status,
        "revision": head.revision,
        "attributes": dict(head.attributes),
        "content_sha256": head.content_sha256,
        "lineage": _lineage(head.lineage),
        "updated_at": head.updated_at,
    }
    if head.revisions is not None:
        view["revisions"] = [
            {
                "revision": r.revision,
                "content_sha256": r.content_sha256,
                "observed_at": r.observed_at,
                "lineage": _lineage(r.lineage),
            }
            for r in head.revisions
        ]
    return view
