"""Deterministic ids, so a crash-retry re-submits the same event and downstream dedups it."""

from __future__ import annotations

import hashlib
import uuid

_NAMESPACE = uuid.UUID("0b7c8d2e-5f41-4d63-9a1e-7c3b2f9e4a10")
VERSION_CHARS = 16


def document_id(tenant_id: str, source: str, item: str) -> str:
    """Stable per (tenant, source, item): every version of one file shares it."""
    digest = hashlib.sha256(f"{tenant_id}\x00{source}\x00{item}".encode()).hexdigest()
    prefix = "fd" if source == "file_drop" else "gd"
    return f"{prefix}_{digest[:32]}"


def version_of(sha256: str) -> str:
    """A document version is its content hash prefix: same bytes, same version."""
    return sha256[:VERSION_CHARS]


def submission_event_id(
    tenant_id: str, source: str, item: str, sha256: str, revision: str = ""
) -> uuid.UUID:
    """One id per (item, source revision, content): a retry re-sends it, a real change does not."""
    return uuid.uuid5(_NAMESPACE, f"{tenant_id}/{source}/{item}/{revision}/{sha256}/submitted")


def deletion_event_id(tenant_id: str, source: str, item: str, revision: str) -> uuid.UUID:
    """One id per deletion of the item's last submitted revision."""
    return uuid.uuid5(_NAMESPACE, f"{tenant_id}/{source}/{item}/{revision}/deleted")
