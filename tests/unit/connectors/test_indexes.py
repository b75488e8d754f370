"""The connectors' ledgers read and write by `_id` only, always naming the tenant."""

from __future__ import annotations

import pytest

from engram_connectors.adapters.ledger import MongoDriveState, MongoSubmissionLedger
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

T = "ten_a"


async def test_connector_queries_are_by_id_and_scoped() -> None:
    db = RecordingDatabase({"drive_cursors": [{"page_token": "p"}]})
    ledger = MongoSubmissionLedger(db)
    drive = MongoDriveState(db)
    exercise = {
        "MongoSubmissionLedger.status": lambda: ledger.status(T, "a.csv", "sha"),
        "MongoSubmissionLedger.begin": lambda: ledger.begin(T, "a.csv", "sha", {}),
        "MongoSubmissionLedger.mark": lambda: ledger.mark(T, "a.csv", "sha", "moved"),
        "MongoDriveState.cursor": lambda: drive.cursor(T, "main"),
        "MongoDriveState.save_cursor": lambda: drive.save_cursor(T, "main", "p2"),
        "MongoDriveState.item": lambda: drive.item(T, "f1"),
        "MongoDriveState.save_item": lambda: drive.save_item(T, "f1", {}),
    }
    await db.run(exercise)
    verdict = judge(db.calls, {}, tenant_id=T)
    assert not verdict.report(), verdict.report()
    assert public_methods(MongoSubmissionLedger, MongoDriveState) == set(exercise)
