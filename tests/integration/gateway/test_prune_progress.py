"""A job's acknowledgements are folded once each, however often and by whom the job is read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram_gateway.adapters.prune_jobs import JOBS, PruneJobs
from engram_gateway.domain.prune import Ack, PruneJob
from engram_platform.outbox import Outbox


def _ack(service: str, sources: set[str], tombstoned: set[str], **counts: int) -> Ack:
    return Ack(service, frozenset(sources), frozenset(tombstoned), counts)


async def _job(jobs: PruneJobs) -> PruneJob:
    found = await jobs.get("tnt_a", "prj_1")
    assert found is not None
    return found


async def test_rows_added_since_the_last_look_are_folded_and_redeliveries_count_once(
    mongo_db: Any,
) -> None:
    jobs = PruneJobs(mongo_db, Outbox(mongo_db))
    await mongo_db[JOBS].insert_one(
        {
            "_id": "tnt_a:prj_1",
            "tenant_id": "tnt_a",
            "job_id": "prj_1",
            "kind": "records",
            "status": "running",
            "selector_preview": {"record_ids": ["r1", "r2"]},
            "selector_sizes": {"record_ids": 2},
            "created_at": datetime.now(UTC),
            "updated_at": datetime.now(UTC),
            "ack_batches": [],
        }
    )
    await jobs.add_acks(
        "tnt_a", "prj_1", [("e1", _ack("extraction", set(), {"r1", "r2"}, records=2))]
    )
    first = await jobs.progress("tnt_a", await _job(jobs))
    assert first.pending("records")["enrichment"] == {"r1", "r2"}

    enrichment = ("e2", _ack("enrichment", {"r1"}, {"f1"}, facts=1))
    await jobs.add_acks("tnt_a", "prj_1", [enrichment])
    await jobs.add_acks(
        "tnt_a", "prj_1", [enrichment, ("e3", _ack("enrichment", {"r2"}, set(), facts=0))]
    )
    later = await jobs.progress("tnt_a", await _job(jobs))
    assert later.pending("records")["enrichment"] == set()
    assert later.counts == {"records": 2, "facts": 1}, "e2 sits in two rows and counts once"

    elsewhere = await PruneJobs(mongo_db, Outbox(mongo_db)).progress("tnt_a", await _job(jobs))
    assert elsewhere.counts == later.counts, "another gateway process folds to the same totals"
    assert elsewhere.pending("records") == later.pending("records")
