"""What ingest's use cases and routes need from storage, implemented by `adapters.store`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from engram_ingest.domain.documents import ExtractEntry, StoredDocument


class DocumentWrites(Protocol):
    """Blobs, document versions and the extract log, as the consumer's use cases change them."""

    async def put_blob(self, tenant_id: str, sha256: str, content: bytes) -> bool: ...

    async def record_version(
        self, tenant_id: str, document_id: str, version: str, meta: dict[str, Any]
    ) -> None: ...

    async def add_content_hash(self, tenant_id: str, document_id: str, sha256: str) -> None: ...

    async def extract_entry(
        self, tenant_id: str, document_id: str, version: str
    ) -> ExtractEntry | None: ...

    async def reopen(self, tenant_id: str, document_id: str, version: str) -> None: ...

    async def record_outcome(
        self, tenant_id: str, document_id: str, version: str, outcome: dict[str, Any]
    ) -> None: ...

    async def mark_deleted(self, tenant_id: str, document_id: str) -> list[str] | None: ...


class DocumentReads(Protocol):
    """A document's status and a prune's leftovers, as the internal API reads them."""

    async def document(self, tenant_id: str, document_id: str) -> StoredDocument | None: ...

    async def remaining(self, tenant_id: str, document_ids: list[str]) -> tuple[int, int]: ...

    async def known(self, tenant_id: str, document_ids: Sequence[str]) -> set[str]: ...
