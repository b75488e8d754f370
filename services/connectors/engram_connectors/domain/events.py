"""Building the connectors' events with deterministic ids."""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Literal

from engram_connectors.domain.identity import (
    deletion_event_id,
    document_id,
    submission_event_id,
    version_of,
)
from engram_events import Envelope, new_event
from engram_events.catalog import DOCUMENT_DELETED, DOCUMENT_SUBMITTED
from engram_events.payloads.documents import DeletionReason, DocumentDeleted, DocumentSubmitted

Source = Literal["file_drop", "gdrive"]


def submitted(
    tenant_id: str,
    source: Source,
    item: str,
    *,
    name: str,
    mime: str,
    content: bytes,
    revision: str = "",
) -> Envelope[Any]:
    """`document.submitted` for one version of one item; the same inputs give the same event id."""
    sha = hashlib.sha256(content).hexdigest()
    event_id = submission_event_id(tenant_id, source, item, sha, revision)
    payload = DocumentSubmitted(
        document_id=document_id(tenant_id, source, item),
        version=version_of(sha),
        source=source,
        source_item_id=item,
        name=name,
        mime=mime,
        content_sha256=sha,
        size_bytes=len(content),
        content_base64=base64.b64encode(content).decode(),
    )
    return new_event(
        DOCUMENT_SUBMITTED, payload, tenant_id=tenant_id, event_id=event_id, correlation_id=event_id
    )


def deleted(
    tenant_id: str, source: Source, item: str, *, reason: DeletionReason, revision: str
) -> Envelope[Any]:
    """`document.deleted` for the last submitted revision of an item."""
    event_id = deletion_event_id(tenant_id, source, item, revision)
    payload = DocumentDeleted(
        document_id=document_id(tenant_id, source, item), source=source, reason=reason
    )
    return new_event(
        DOCUMENT_DELETED, payload, tenant_id=tenant_id, event_id=event_id, correlation_id=event_id
    )
