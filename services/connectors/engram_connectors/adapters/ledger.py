"""What the connectors submitted, in MongoDB: drop-file submissions, Drive items, Drive cursors."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo.errors import DuplicateKeyError

from engram_connectors.domain.drive import DriveItem

DROP_SUBMISSIONS = "drop_submissions"
DRIVE_ITEMS = "drive_items"
DRIVE_CURSORS = "drive_cursors"


class MongoSubmissionLedger:
    """`_id` = `tenant:file_drop:sha:path`, so every lookup is a fast primary-key read."""

    def __init__(self, db: Any) -> None:
        self.collection = db[DROP_SUBMISSIONS]

    @staticmethod
    def _key(tenant_id: str, relative: str, sha256: str) -> str:
        return f"{tenant_id}:file_drop:{sha256}:{relative}"

    async def status(self, tenant_id: str, relative: str, sha256: str) -> str | None:
        """Where the submission of this exact content at this path stands (`submitting`,
        `submitted`, ...), None when there is none."""
        row = await self.collection.find_one(
            {"_id": self._key(tenant_id, relative, sha256), "tenant_id": tenant_id},
            {"status": 1},
        )
        return str(row["status"]) if row else None

    async def begin(
        self, tenant_id: str, relative: str, sha256: str, fields: dict[str, Any]
    ) -> None:
        """Record the intent to submit before publishing (status `submitting`); a retry keeps it."""
        now = datetime.now(UTC)
        try:
            await self.collection.insert_one(
                {
                    **fields,
                    "_id": self._key(tenant_id, relative, sha256),
                    "tenant_id": tenant_id,
                    "relative_path": relative,
                    "content_sha256": sha256,
                    "status": "submitting",
                    "created_at": now,
                    "updated_at": now,
                }
            )
        except DuplicateKeyError:
            pass

    async def mark(self, tenant_id: str, relative: str, sha256: str, status: str) -> None:
        """Advance a submission: `submitted` once Kafka acked, `moved` once out of the inbox."""
        await self.collection.update_one(
            {"_id": self._key(tenant_id, relative, sha256), "tenant_id": tenant_id},
            {"$set": {"status": status, "updated_at": datetime.now(UTC)}},
        )


class MongoDriveState:
    """Cursors and items keyed by `_id` (tenant first); the cursor moves only when told."""

    def __init__(self, db: Any) -> None:
        self.cursors = db[DRIVE_CURSORS]
        self.items = db[DRIVE_ITEMS]

    async def cursor(self, tenant_id: str, connection: str) -> str | None:
        """The page token to read next, or None before the first start."""
        row = await self.cursors.find_one(
            {"_id": f"{tenant_id}:gdrive:{connection}", "tenant_id": tenant_id}
        )
        return None if row is None else str(row["page_token"])

    async def save_cursor(self, tenant_id: str, connection: str, page_token: str) -> None:
        """Advance the cursor (call only once the page's events are acknowledged)."""
        now = datetime.now(UTC)
        await self.cursors.update_one(
            {"_id": f"{tenant_id}:gdrive:{connection}", "tenant_id": tenant_id},
            {
                "$set": {"page_token": page_token, "updated_at": now},
                "$setOnInsert": {"created_at": now},
                "$inc": {"advances": 1},
            },
            upsert=True,
        )

    async def item(self, tenant_id: str, file_id: str) -> DriveItem | None:
        """What was last done for one Drive file."""
        row = await self.items.find_one(
            {"_id": f"{tenant_id}:gdrive:{file_id}", "tenant_id": tenant_id}
        )
        if row is None:
            return None
        return DriveItem(
            status=row.get("status"),
            md5=row.get("md5"),
            drive_version=row.get("drive_version"),
            content_sha256=row.get("content_sha256"),
            submitted_revision=row.get("submitted_revision"),
        )

    async def save_item(self, tenant_id: str, file_id: str, fields: dict[str, Any]) -> None:
        """Remember a Drive file's submitted revision, deletion or rejection."""
        await self.items.update_one(
            {"_id": f"{tenant_id}:gdrive:{file_id}", "tenant_id": tenant_id},
            {
                "$set": {
                    **fields,
                    "tenant_id": tenant_id,
                    "file_id": file_id,
                    "updated_at": datetime.now(UTC),
                }
            },
            upsert=True,
        )
