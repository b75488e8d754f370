"""The finalizer's view of prune jobs: every tenant's unfinished jobs, and only those."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from engram_gateway.adapters.prune_jobs import JOBS, PruneJobs
from engram_platform.outbox import Outbox

T0 = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


def _job(key: str, status: str, minute: int) -> dict[str, object]:
    return {
        "_id": key,
        "tenant_id": key.split(":")[0],
        "status": status,
        "created_at": T0 + timedelta(minutes=minute),
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

    assert [job["_id"] for job in await jobs.running()] == ["tnt_a:prj_older", "tnt_b:prj_newer"]

    await jobs.finish({"_id": "tnt_a:prj_older", "tenant_id": "tnt_a"}, {"verified_empty": True})
    assert [job["_id"] for job in await jobs.running()] == ["tnt_b:prj_newer"]
