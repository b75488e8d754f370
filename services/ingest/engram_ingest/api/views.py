"""Documents as the internal API shows them."""

from __future__ import annotations

from typing import Any


def _status(doc: dict[str, Any]) -> str:
    """The document's status as the public API reports it."""
    if doc.get("status") == "deleted":
        return "deleted"
    latest = doc.get("extract_log", {}).get(doc.get("latest_version"), {})
    return str(latest.get("status", "pending"))


def document_view(document_id: str, doc: dict[str, Any]) -> dict[str, Any]:
    """Status, versions and extract log of one document."""
    latest = doc["extract_log"].get(doc.get("latest_version"), {})
    return {
        "document_id": document_id,
        "name": doc.get("name"),
        "mime": doc.get("mime"),
        "source": doc.get("source"),
        "status": _status(doc),
        "latest_version": doc.get("latest_version"),
        "record_count": latest.get("record_count", 0),
        "rejected_count": latest.get("rejected_count", 0),
        "attempts": latest.get("attempts", 0),
        "error": latest.get("last_error"),
        "versions": [
            {
                "version": v,
                "status": row.get("status"),
                "attempts": row.get("attempts", 0),
                "last_error": row.get("last_error"),
                "record_count": row.get("record_count", 0),
                "created_at": row.get("created_at"),
                "updated_at": row.get("updated_at"),
            }
            for v, row in doc["extract_log"].items()
        ],
        "created_at": doc.get("created_at"),
        "updated_at": doc.get("updated_at"),
    }
