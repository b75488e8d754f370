"""The finalizer's view of prune jobs: every tenant's unfinished jobs, and only those."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from engram_gateway.adapters.prune_jobs import JOBS, PruneJobs
from engram_gateway.domain.prune import Verification
from engram_platform.outbox import Outbox

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


def _job(key: str, status: str, minute: int) -> dict[str, object]:
    """A job row as `PruneJobs.open` writes it."""
    tenant_id, job_id = key.split(":")
    at = T0 + timedelta(minutes=minute)
    return {
        "_id": key,
        "tenant_id": tenant_id,
        "job_id": job_id,
        "kind": "records",
        "status": status,
        "selector_preview": {"record_ids": ["rec_1"]},
        "selector_sizes": {"record_ids": 1},
        "document_id": None,
        "conversation_id": None,
        "verified_empty": None,
        "created_at": at,
        "updated_at": at,
        "ack_batches": [],
    }


async def test_the_finalizer_reads_every_tenants_running_jobs_oldest_first(mongo_db: Any) -> None:
    jobs = PruneJobs(mongo_db, Outbox(mongo_db))
    await mongo_db[JOBS].insert_many(
        [
            _job("tnt_a:prj_done", "completed", 0),
            _job("tnt_b:prj_newer", "running", 5),
            _job("tnt_a:prj_older", "running", 1),
        ]
    )

    running = await jobs.running()
    assert [job.key for job in running] == ["tnt_a:prj_older", "tnt_b:prj_newer"]

    clean = Verification(verified_empty=True, references={"memory": {"records": 0}}, unverified=[])
    await jobs.finish(running[0], clean)
    assert [job.key for job in await jobs.running()] == ["tnt_b:prj_newer"]
    finished = await jobs.get("tnt_a", "prj_older")
    assert finished is not None and finished.status == "completed"
    assert finished.verification == clean, "the verification reads back as it was recorded"
    assert finished.completed_at is not None
