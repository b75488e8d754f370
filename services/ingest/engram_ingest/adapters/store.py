"""Ingest's database: content-addressed blobs, documents and the extract log per version."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from engram_ingest.domain.documents import ExtractEntry, StoredDocument
from engram_platform.held import held_ids
from engram_platform.indexes import Indexes

BLOBS = "blobs"
DOCUMENTS = "documents"
EXTRACT_LOG = "extract_log"
INDEXES: Indexes = {
    DOCUMENTS: [IndexModel([("tenant_id", ASCENDING), ("content_hashes", ASCENDING)])],
}
"""Whether a live document of the tenant still uses a blob; everything else is read by `_id`."""


class IngestStore:
    """Every key starts with the tenant, and every query carries the tenant predicate."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def put_blob(self, tenant_id: str, sha256: str, content: bytes) -> bool:
        """Store bytes once per tenant and hash; False when they were already there."""
        try:
            await self.db[BLOBS].insert_one(
                {
                    "_id": f"{tenant_id}:{sha256}",
                    "tenant_id": tenant_id,
                    "size": len(content),
                    "content": content,
                }
            )
        except DuplicateKeyError:
            return False
        return True

    async def record_version(
        self, tenant_id: str, document_id: str, version: str, meta: dict[str, Any]
    ) -> None:
        """Upsert the document and open an extract-log row for this version (idempotent)."""
        now = datetime.now(UTC)
        await self.db[DOCUMENTS].update_one(
            {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id},
            {
                "$set": {**meta, "latest_version": version, "status": "active", "updated_at": now},
                "$setOnInsert": {"document_id": document_id, "created_at": now},
                "$addToSet": {"versions": version},
            },
            upsert=True,
        )
        await self.db[EXTRACT_LOG].update_one(
            {"_id": f"{tenant_id}:{document_id}:{version}", "tenant_id": tenant_id},
            {
                "$setOnInsert": {
                    "document_id": document_id,
                    "version": version,
                    "status": "pending",
                    "attempts": 0,
                    "last_error": None,
                    "record_count": 0,
                    "rejected_count": 0,
                    "created_at": now,
                    "updated_at": now,
                }
            },
            upsert=True,
        )

    async def extract_entry(
        self, tenant_id: str, document_id: str, version: str
    ) -> ExtractEntry | None:
        """The extract-log entry of one version."""
        row = await self.db[EXTRACT_LOG].find_one(
            {"_id": f"{tenant_id}:{document_id}:{version}", "tenant_id": tenant_id}
        )
        return _entry(row) if row else None

    async def record_outcome(
        self, tenant_id: str, document_id: str, version: str, outcome: dict[str, Any]
    ) -> None:
        """Extraction's verdict on one version: `extracted` with counts, or `failed` with why."""
        now = datetime.now(UTC)
        stamp = "extracted_at" if outcome.get("status") == "extracted" else "failed_at"
        await self.db[EXTRACT_LOG].update_one(
            {"_id": f"{tenant_id}:{document_id}:{version}", "tenant_id": tenant_id},
            {
                "$set": {**outcome, "updated_at": now, stamp: now},
                "$setOnInsert": {"document_id": document_id, "version": version, "created_at": now},
            },
            upsert=True,
        )

    async def reopen(self, tenant_id: str, document_id: str, version: str) -> None:
        """A failed version submitted again is `pending` while extraction retries it."""
        await self.db[EXTRACT_LOG].update_one(
            {"_id": f"{tenant_id}:{document_id}:{version}", "tenant_id": tenant_id},
            {"$set": {"status": "pending", "updated_at": datetime.now(UTC)}},
        )

    async def document(self, tenant_id: str, document_id: str) -> StoredDocument | None:
        """A document with its versions' extract-log entries, in the order they arrived."""
        doc = await self.db[DOCUMENTS].find_one(
            {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id}
        )
        if doc is None:
            return None
        versions = [str(v) for v in doc.get("versions", [])]
        ids = [f"{tenant_id}:{document_id}:{v}" for v in versions]
        rows = self.db[EXTRACT_LOG].find({"_id": {"$in": ids}, "tenant_id": tenant_id})
        found = {str(row["version"]): _entry(row) async for row in rows}
        return StoredDocument(
            document_id=document_id,
            status=str(doc.get("status", "active")),
            latest_version=doc.get("latest_version"),
            name=doc.get("name"),
            mime=doc.get("mime"),
            source=doc.get("source"),
            extract_log={v: found[v] for v in versions if v in found},
            created_at=doc.get("created_at"),
            updated_at=doc.get("updated_at"),
        )

    async def known(self, tenant_id: str, document_ids: Sequence[str]) -> set[str]:
        """Which of these documents the tenant has (deleted ones too: their id stays theirs)."""
        return set(await held_ids(self.db[DOCUMENTS], tenant_id, document_ids))

    async def mark_deleted(self, tenant_id: str, document_id: str) -> list[str] | None:
        """Mark the document deleted and drop blobs no live document of the tenant still uses;
        the content hashes it referenced, oldest first (None for a document never stored)."""
        doc = await self.db[DOCUMENTS].find_one_and_update(
            {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id},
            {"$set": {"status": "deleted", "deleted_at": datetime.now(UTC)}},
        )
        if doc is None:
            return None
        for sha in set(doc.get("content_hashes", [])):
            still_used = await self.db[DOCUMENTS].find_one(
                {"tenant_id": tenant_id, "status": "active", "content_hashes": sha}, {"_id": 1}
            )
            if still_used is None:
                await self.db[BLOBS].delete_many(
                    {"_id": f"{tenant_id}:{sha}", "tenant_id": tenant_id}
                )
        return [str(sha) for sha in doc.get("content_hashes", [])]

    async def add_content_hash(self, tenant_id: str, document_id: str, sha256: str) -> None:
        """Remember which blobs a document references (for dropping them on deletion)."""
        await self.db[DOCUMENTS].update_one(
            {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id},
            {"$addToSet": {"content_hashes": sha256}},
        )

    async def remaining(self, tenant_id: str, document_ids: list[str]) -> tuple[int, int]:
        """Of these documents: how many are not deleted, and how many deleted ones keep blobs."""
        live = blobs = 0
        for document_id in dict.fromkeys(document_ids):
            doc = await self.db[DOCUMENTS].find_one(
                {"_id": f"{tenant_id}:{document_id}", "tenant_id": tenant_id}
            )
            if doc is None:
                continue
            if doc.get("status") != "deleted":
                live += 1
                continue
            for sha in set(doc.get("content_hashes", [])):
                still_used = await self.db[DOCUMENTS].find_one(
                    {"tenant_id": tenant_id, "status": "active", "content_hashes": sha}, {"_id": 1}
                )
                blob = await self.db[BLOBS].find_one(
                    {"_id": f"{tenant_id}:{sha}", "tenant_id": tenant_id}, {"_id": 1}
                )
                if blob is not None and still_used is None:
                    blobs += 1
        return live, blobs


def _entry(row: dict[str, Any]) -> ExtractEntry:
    """A stored extract-log row as the use cases and views read it."""
    return ExtractEntry(
        version=str(row["version"]),
        status=str(row.get("status", "pending")),
        attempts=int(row.get("attempts") or 0),
        last_error=row.get("last_error"),
        record_count=int(row.get("record_count") or 0),
        rejected_count=int(row.get("rejected_count") or 0),
        created_at=row.get("created_at"),
        updated_at=row.get("updated_at"),
    )
