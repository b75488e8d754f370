"""Prune jobs and their acknowledgements in the gateway's database."""

from __future__ import annotations

import hashlib
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import bson
from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from engram_events import Envelope
from engram_gateway.domain.prune import (
    SELECTOR_PREVIEW,
    Ack,
    JobKind,
    Progress,
    PruneJob,
    Verification,
)
from engram_platform.indexes import Indexes
from engram_platform.outbox import Outbox

JOBS = "prune_jobs"
SELECTORS = "prune_selectors"
"""A job's full selector, apart: the job row is read and rewritten on every acknowledgement
batch and status read, and 10k record ids made it a 300 KB document each time."""
ACKS = "prune_acks"
CACHED_JOBS = 64
"""Jobs whose folded acknowledgements a process keeps (a job's rows are folded once each)."""
LOAD_CHUNK = 500
RECENT_JOBS = 20
INDEXES: Indexes = {
    JOBS: [
        IndexModel([("tenant_id", ASCENDING), ("created_at", DESCENDING)]),
        IndexModel([("status", ASCENDING), ("created_at", ASCENDING)]),
    ]
}
"""A tenant's newest jobs (the ops dashboard) and every tenant's unfinished jobs (the
finalizer); everything else is read by `_id`."""


@dataclass
class _Folded:
    """A job's progress and the acknowledgement rows already folded into it."""

    progress: Progress
    rows: set[str]


class PruneJobs:
    """Jobs keyed `tenant:job`; acknowledgements in batch rows, counted once per event."""

    def __init__(self, db: Any, outbox: Outbox) -> None:
        self.db = db
        self.outbox = outbox
        self._progress: OrderedDict[str, _Folded] = OrderedDict()

    async def get(self, tenant_id: str, job_id: str) -> PruneJob | None:
        """The job, only within the caller's tenant."""
        doc = await self.db[JOBS].find_one(
            {"_id": _job_key(tenant_id, job_id), "tenant_id": tenant_id}
        )
        return _job(doc) if doc else None

    async def open(
        self,
        tenant_id: str,
        job_id: str,
        kind: JobKind,
        selector: dict[str, Any],
        event: Envelope[Any],
    ) -> None:
        """Store the job with a preview of its selector and stage its triggering event in the
        same write; the full selector is kept apart first, so a job never lacks it."""
        key = _job_key(tenant_id, job_id)
        await self.db[SELECTORS].replace_one(
            {"_id": key, "tenant_id": tenant_id},
            {"tenant_id": tenant_id, "packed": pack_selector(selector)},
            upsert=True,
        )
        shown, sizes = preview(selector)
        now = datetime.now(UTC)
        await self.outbox.write_with_events(
            self.db[JOBS],
            key,
            {
                "$set": {
                    "tenant_id": tenant_id,
                    "job_id": job_id,
                    "kind": kind,
                    "selector_preview": shown,
                    "selector_sizes": sizes,
                    "document_id": selector.get("document_id"),
                    "conversation_id": selector.get("conversation_id"),
                    "status": "running",
                    "verified_empty": None,
                    "created_at": now,
                    "updated_at": now,
                    "ack_batches": [],
                }
            },
            [event],
            scope={"tenant_id": tenant_id},
        )

    async def selector(self, job: PruneJob) -> dict[str, Any]:
        """A job's full selector, kept apart from the job row."""
        doc = await self.db[SELECTORS].find_one({"_id": job.key, "tenant_id": job.tenant_id})
        return unpack_selector(doc["packed"]) if doc else {}

    async def add_acks(self, tenant_id: str, job_id: str, acks: Sequence[tuple[str, Ack]]) -> None:
        """Store a batch of one job's acknowledgements (event id, ack) as one compressed row and
        list the row on the job: a 10k-record prune brings tens of thousands of them, and a job
        document listing each one grew too large to read on every pass."""
        if not acks:
            return
        unique = dict(acks)
        digest = hashlib.sha256("\n".join(sorted(unique)).encode()).hexdigest()[:32]
        key = f"{tenant_id}:{job_id}:{digest}"
        packed = zlib.compress(
            bson.encode({"acks": [_ack_doc(eid, a) for eid, a in unique.items()]})
        )
        now = datetime.now(UTC)
        try:
            await self.db[ACKS].insert_one(
                {"_id": key, "tenant_id": tenant_id, "job_id": job_id, "packed": packed, "at": now}
            )
        except DuplicateKeyError:
            pass
        await self.db[JOBS].update_one(
            {"_id": _job_key(tenant_id, job_id), "tenant_id": tenant_id},
            {"$addToSet": {"ack_batches": key}, "$set": {"updated_at": now}},
        )

    async def progress(self, tenant_id: str, job: PruneJob) -> Progress:
        """The job's acknowledgements folded: rows are immutable, so each process folds a row
        once and reads only the rows listed on the job since its last look."""
        key = job.key
        folded = self._progress.pop(key, None) or _Folded(Progress(), set())
        self._progress[key] = folded
        while len(self._progress) > CACHED_JOBS:
            self._progress.popitem(last=False)
        missing = [k for k in job.ack_batches if k not in folded.rows]
        for first in range(0, len(missing), LOAD_CHUNK):
            chunk = missing[first : first + LOAD_CHUNK]
            rows = {
                row["_id"]: row
                async for row in self.db[ACKS].find({"_id": {"$in": chunk}, "tenant_id": tenant_id})
            }
            for row_key in chunk:
                if row_key in rows:
                    for event_id, ack in _unpack(rows[row_key]).items():
                        folded.progress.add(event_id, ack)
                    folded.rows.add(row_key)
        return folded.progress

    async def recent(self, tenant_id: str, limit: int = RECENT_JOBS) -> list[str]:
        """The ids of the tenant's newest jobs, newest first."""
        cursor = (
            self.db[JOBS]
            .find({"tenant_id": tenant_id}, {"job_id": 1})
            .sort("created_at", DESCENDING)
            .limit(limit)
        )
        return [str(job["job_id"]) async for job in cursor]

    async def running(self) -> list[PruneJob]:
        """Every tenant's unfinished jobs, oldest first."""
        cursor = self.db[JOBS].find({"status": "running"}).sort("created_at", ASCENDING)
        return [_job(doc) async for doc in cursor]

    async def finish(self, job: PruneJob, verification: Verification) -> None:
        """Record the verification outcome; the job is over."""
        await self.db[JOBS].update_one(
            {"_id": job.key, "tenant_id": job.tenant_id},
            {
                "$set": {
                    "status": "completed",
                    "verified_empty": verification.verified_empty,
                    "verification": asdict(verification),
                    "completed_at": datetime.now(UTC),
                }
            },
        )


def pack_selector(selector: dict[str, Any]) -> bytes:
    """A selector as one compressed value: 100,000 record ids read as one field, not a list."""
    return zlib.compress(bson.encode(selector))


def unpack_selector(packed: bytes) -> dict[str, Any]:
    """What `pack_selector` stored."""
    return dict(bson.decode(zlib.decompress(bytes(packed))))


def preview(selector: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """The selector with each list cut to SELECTOR_PREVIEW items, and every list's length."""
    sizes = {k: len(v) for k, v in selector.items() if isinstance(v, list)}
    shown = {k: v[:SELECTOR_PREVIEW] if isinstance(v, list) else v for k, v in selector.items()}
    return shown, sizes


def _job_key(tenant_id: str, job_id: str) -> str:
    return f"{tenant_id}:{job_id}"


def _job(doc: dict[str, Any]) -> PruneJob:
    """A stored job row as the use cases read it."""
    verification = doc.get("verification")
    return PruneJob(
        key=doc["_id"],
        tenant_id=doc["tenant_id"],
        job_id=doc["job_id"],
        kind=doc["kind"],
        status=doc["status"],
        selector_preview=dict(doc["selector_preview"]),
        selector_sizes=dict(doc["selector_sizes"]),
        document_id=doc.get("document_id"),
        conversation_id=doc.get("conversation_id"),
        created_at=doc["created_at"],
        updated_at=doc["updated_at"],
        ack_batches=tuple(doc.get("ack_batches", ())),
        verification=Verification(**verification) if verification else None,
        completed_at=doc.get("completed_at"),
    )


def _ack_doc(event_id: str, ack: Ack) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "service": ack.service,
        "source_ids": sorted(ack.source_ids),
        "tombstoned_ids": sorted(ack.tombstoned_ids),
        "counts": ack.counts,
    }


def _unpack(row: dict[str, Any]) -> dict[str, Ack]:
    """A stored batch row's acknowledgements by event id."""
    docs = bson.decode(zlib.decompress(bytes(row["packed"])))["acks"]
    return {
        doc["event_id"]: Ack(
            service=doc["service"],
            source_ids=frozenset(doc["source_ids"]),
            tombstoned_ids=frozenset(doc["tombstoned_ids"]),
            counts=dict(doc["counts"]),
        )
        for doc in docs
    }
