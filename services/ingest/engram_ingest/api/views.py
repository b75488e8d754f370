"""Documents as the internal API shows them."""

from __future__ import annotations

from typing import Any

from engram_ingest.domain.documents import ExtractEntry, StoredDocument


def document_view(doc: StoredDocument) -> dict[str, Any]:
    """Status, versions and extract log of one document."""
    latest = doc.latest or ExtractEntry(version="")
    return {
        "document_id": doc.document_id,
        "name": doc.name,
        "mime": doc.mime,
        "source": doc.source,
        "status": doc.public_status,
        "latest_version": doc.latest_version,
        "record_count": latest.record_count,
        "rejected_count": latest.rejected_count,
        "attempts": latest.attempts,
        "error": latest.last_error,
        "versions": [
            {
                "version": entry.version,
                "status": entry.status,
                "attempts": entry.attempts,
                "last_error": entry.last_error,
                "record_count": entry.record_count,
                "created_at": entry.created_at,
                "updated_at": entry.updated_at,
            }
            for entry in doc.extract_log.values()
        ],
        "created_at": doc.created_at,
        "updated_at": doc.updated_at,
    }
