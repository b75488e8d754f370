"""Records as the internal API shows them."""

from __future__ import annotations

from typing import Any


def _lineage(stored: dict[str, Any] | None) -> dict[str, Any]:
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


def record_view(head: dict[str, Any]) -> dict[str, Any]:
    """A record as the API shows it: current content, lineage and (when read) its history."""
    view = {
        "record_id": head["record_id"],
        "record_type": head["record_type"],
        "entity_id": head["entity_id"],
        "status": head.get("status", "active"),
        "revision": head["revision"],
        "attributes": head["attributes"],
        "content_sha256": head["content_sha256"],
        "lineage": _lineage(head.get("lineage")),
        "updated_at": head.get("updated_at"),
    }
    if "revisions" in head:
        view["revisions"] = [
            {
                "revision": r["revision"],
                "content_sha256": r["content_sha256"],
                "observed_at": r.get("observed_at"),
                "lineage": _lineage(r.get("lineage")),
            }
            for r in head["revisions"]
        ]
    return view
