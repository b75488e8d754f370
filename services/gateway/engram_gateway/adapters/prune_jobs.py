"""Prune jobs and their acknowledgements in the gateway's database."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pymongo.errors import DuplicateKeyError

from engram_gateway.domain.prune import Ack

JOBS = "prune_jobs"
ACKS = "prune_acks"


class PruneJobs:
    """Jobs keyed `tenant:job`; acknowledgements keyed by the event that carried them."""

    def __init__(self, db: Any) -> None:
        self.db = db

    def job_key(self, tenant_id: str, job_id: str) -> str:
        return f"{tenant_id}:{job_id}"

    async def get(self, tenant_id: str, job_id: str) -> dict[str, Any] | None:
        """The job, only within the caller's tenant."""
        doc: dict[str, Any] | None = await self.db[JOBS].find_one(
            {"_id": self.job_key(tenant_id, job_id), "tenant_id": tenant_id}
        )
        return doc

    async def add_ack(self, tenant_id: str, event_id: str, ack: Ack, job_id: str) -> bool:
        """Store one acknowledgement once; False when this event was already stored."""
        try:
            await self.db[ACKS].insert_one(
                {
                    "_id": f"{tenant_id}:{job_id}:{event_id}",
                    "tenant_id": tenant_id,
                    "job_id": job_id,
                    "service": ack.service,
                    "source_ids": sorted(ack.source_ids),
                    "tombstoned_ids": sorted(ack.tombstoned_ids),
                    "counts": ack.counts,
                    "at": datetime.now(UTC),
                }
            )
        except DuplicateKeyError:
            return False
        await self.db[JOBS].update_one(
            {"_id": self.job_key(tenant_id, job_id), "tenant_id": tenant_id},
            {"$addToSet": {"ack_ids": event_id}, "$set": {"updated_at": datetime.now(UTC)}},
        )
        return True

    async def acks(self, tenant_id: str, job: dict[str, Any]) -> list[Ack]:
        """Every acknowledgement of a job (looked up by key, not scanned)."""
        keys = [f"{tenant_id}:{job['job_id']}:{eid}" for eid in job.get("ack_ids", [])]
        if not keys:
            return []
        cursor = self.db[ACKS].find({"_id": {"$in": keys}, "tenant_id": tenant_id})
        return [
            Ack(
                service=row["service"],
                source_ids=frozenset(row.get("source_ids", [])),
                tombstoned_ids=frozenset(row.get("tombstoned_ids", [])),
                counts=dict(row.get("counts", {})),
            )
            async for row in cursor
        ]

    async def running(self) -> list[dict[str, Any]]:
        """Jobs not yet finished (few at a time)."""
        return [doc async for doc in self.db[JOBS].find({"status": "running"})]

    async def finish(self, job: dict[str, Any], verification: dict[str, Any]) -> None:
        """Record the verification outcome; the job is over."""
        await self.db[JOBS].update_one(
            {"_id": job["_id"], "tenant_id": job["tenant_id"]},
            {
                "$set": {
                    "status": "completed",
                    "verified_empty": verification["verified_empty"],
                    "verification": verification,
                    "completed_at": datetime.now(UTC),
                }
            },
        )
