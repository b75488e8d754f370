"""The finalizer's running markers: what a crash leaves behind is cleaned up, nothing is missed."""

from __future__ import annotations

import time
from typing import Any

from engram_gateway.adapters.prune_jobs import JOBS, ORPHAN_SECONDS, RUNNING, PruneJobs


def _job(key: str, status: str) -> dict[str, object]:
    return {"_id": key, "tenant_id": key.split(":")[0], "status": status}


async def test_markers_left_by_a_crash_are_dropped_and_old_running_jobs_get_one(
    mongo_db: Any,
) -> None:
    jobs = PruneJobs(mongo_db)
    await mongo_db[JOBS].insert_many(
        [
            _job("tnt_a:prj_done", "completed"),
            _job("tnt_a:prj_live", "running"),
            _job("tnt_a:prj_before_markers", "running"),
        ]
    )
    await jobs.mark_running("tnt_a", "prj_done")
    await jobs.mark_running("tnt_a", "prj_live")
    await jobs.mark_running("tnt_a", "prj_being_written")
    long_ago = time.time() - ORPHAN_SECONDS - 1
    await mongo_db[RUNNING].insert_one(
        {"_id": "tnt_a:prj_never_written", "tenant_id": "tnt_a", "created": long_ago}
    )

    live = [job["_id"] for job in await jobs.running()]
    assert live == ["tnt_a:prj_live"]
    left = sorted([doc["_id"] async for doc in mongo_db[RUNNING].find({})])
    assert left == ["tnt_a:prj_being_written", "tnt_a:prj_live"], (
        "a finished job's marker (crash between finish and the delete) and a marker whose "
        "job was never written go; a young marker's job may still be on its way"
    )

    assert await jobs.mark_unmarked() == 2
    assert await jobs.mark_unmarked() == 0, "once per database"
    live = sorted(job["_id"] for job in await jobs.running())
    assert live == ["tnt_a:prj_before_markers", "tnt_a:prj_live"]
