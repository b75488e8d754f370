"""The Drive poller's cursor and revision logic, over hand-written fakes."""

from __future__ import annotations

import pytest

from engram_connectors.domain.drive import ChangesPage, DriveFile, plan
from engram_connectors.service.gdrive import DrivePoller
from tests.unit.connectors.fakes import FakeDrive, FakeDriveState, FakePublisher

pytestmark = pytest.mark.unit

TENANT = "tnt_a"
SAME_TIME = "2026-03-01T12:00:00.000Z"


def _poller(
    drive: FakeDrive, state: FakeDriveState, publisher: FakePublisher, page_size: int = 1
) -> DrivePoller:
    return DrivePoller(
        drive,
        state,
        publisher,
        tenant_id=TENANT,
        page_size=page_size,
        interval=0.01,
        max_bytes=1000,
    )


async def _started() -> tuple[FakeDrive, FakeDriveState, FakePublisher, DrivePoller]:
    drive, state, publisher = FakeDrive(), FakeDriveState(), FakePublisher()
    poller = _poller(drive, state, publisher)
    await poller.poll_once()
    return drive, state, publisher, poller


async def test_first_poll_only_stores_the_start_token() -> None:
    drive, state, publisher = FakeDrive(), FakeDriveState(), FakePublisher()
    drive.put("old", "old.csv", b"id\n1\n")
    await _poller(drive, state, publisher).poll_once()
    assert state.cursors[(TENANT, "default")] == "2"
    assert publisher.published == []


async def test_two_files_with_one_modified_time_are_both_submitted_across_pages() -> None:
    drive, state, publisher, poller = await _started()
    drive.put("f1", "a.csv", b"id\n1\n", modified_time=SAME_TIME)
    drive.put("f2", "b.csv", b"id\n2\n", modified_time=SAME_TIME)
    report = await poller.poll_once()
    submitted = publisher.of_type("document.submitted")
    assert sorted(e.payload.source_item_id for e in submitted) == ["f1", "f2"]
    assert report.pages == 2
    assert state.history == ["1", "2", "3"]


async def test_a_failure_mid_page_keeps_the_cursor_and_the_replay_publishes_nothing_twice() -> None:
    drive, state, publisher, _ = await _started()
    poller = _poller(drive, state, publisher, page_size=10)
    drive.put("f1", "a.csv", b"id\n1\n")
    drive.put("f2", "b.csv", b"id\n2\n")
    drive.broken_downloads.add("f2")
    with pytest.raises(TimeoutError):
        await poller.poll_once()
    assert state.cursors[(TENANT, "default")] == "1", "the page was not committed"
    assert [e.payload.source_item_id for e in publisher.published] == ["f1"]

    drive.broken_downloads.clear()
    await poller.poll_once()
    assert [e.payload.source_item_id for e in publisher.published] == ["f1", "f2"]
    assert state.cursors[(TENANT, "default")] == "3"


async def test_a_failed_publish_keeps_the_cursor() -> None:
    drive, state, publisher, poller = await _started()
    drive.put("f1", "a.csv", b"id\n1\n")
    publisher.fail_next = 1
    with pytest.raises(ConnectionError):
        await poller.poll_once()
    assert state.cursors[(TENANT, "default")] == "1"
    await poller.poll_once()
    assert len(publisher.of_type("document.submitted")) == 1
    assert state.cursors[(TENANT, "default")] == "2"


async def test_a_changed_checksum_is_a_new_version_of_the_same_document() -> None:
    drive, _, publisher, poller = await _started()
    drive.put("f1", "a.csv", b"id\n1\n")
    await poller.poll_once()
    drive.put("f1", "a.csv", b"id\n1\n2\n")
    await poller.poll_once()
    first, second = publisher.of_type("document.submitted")
    assert first.payload.document_id == second.payload.document_id
    assert first.payload.version != second.payload.version
    assert first.event_id != second.event_id


async def test_a_metadata_only_change_is_not_resubmitted() -> None:
    drive, _, publisher, poller = await _started()
    drive.put("f1", "a.csv", b"id\n1\n")
    await poller.poll_once()
    drive.put("f1", "renamed.csv", b"id\n1\n")
    report = await poller.poll_once()
    assert len(publisher.of_type("document.submitted")) == 1
    assert report.unchanged == 1


async def test_trash_then_untrash_then_trash_gives_distinct_events() -> None:
    drive, _, publisher, poller = await _started()
    drive.put("f1", "a.csv", b"id\n1\n")
    await poller.poll_once()
    drive.trash("f1")
    await poller.poll_once()
    drive.untrash("f1")
    await poller.poll_once()
    drive.trash("f1")
    await poller.poll_once()
    kinds = [(e.event_type, getattr(e.payload, "reason", None)) for e in publisher.published]
    assert kinds == [
        ("document.submitted", None),
        ("document.deleted", "drive_trashed"),
        ("document.submitted", None),
        ("document.deleted", "drive_trashed"),
    ]
    assert len({e.event_id for e in publisher.published}) == 4


async def test_removed_and_revoked_files_are_deleted_once() -> None:
    drive, _, publisher, poller = await _started()
    drive.put("f1", "a.csv", b"id\n1\n")
    drive.put("f2", "b.csv", b"id\n2\n")
    await poller.poll_once()
    drive.remove("f1")
    drive.files["f2"].readable = False
    drive.log.append(drive.log[-1].__class__("f2", False, "t"))
    drive.log.append(drive.log[-1].__class__("f2", False, "t"))
    await poller.poll_once()
    reasons = {
        e.payload.document_id: e.payload.reason for e in publisher.of_type("document.deleted")
    }
    assert sorted(reasons.values()) == ["drive_removed", "permission_lost"]
    assert len(publisher.of_type("document.deleted")) == 2


async def test_unknown_files_that_vanish_publish_nothing() -> None:
    drive, _, publisher, poller = await _started()
    drive.put("f1", "a.png", b"\x89PNG")
    drive.remove("f1")
    await poller.poll_once()
    assert publisher.published == []


async def test_google_docs_are_exported_and_binary_files_rejected() -> None:
    drive, state, publisher, poller = await _started()
    page = b"<html><body><h1>Owners</h1><p>owner: acme</p></body></html>"
    drive.put("doc", "Notes", page, mime_type="application/vnd.google-apps.document")
    drive.put("bin", "x.csv", b"\x00\x01binary")
    await poller.poll_once()
    (doc,) = publisher.of_type("document.submitted")
    assert doc.payload.mime == "text/html" and doc.payload.source_item_id == "doc"
    assert drive.exported == [("doc", "text/html")]
    assert state.items[(TENANT, "bin")]["last_rejection"] == "binary"


def test_plan_skips_folders_and_refuses_large_files_before_downloading() -> None:
    folder = DriveFile("d", "Folder", "application/vnd.google-apps.folder", "1", "t")
    big = DriveFile("b", "big.csv", "text/csv", "1", "t", md5="m", size=5000)
    assert plan(folder, None, max_bytes=1000).action == "ignore"
    assert plan(big, None, max_bytes=1000).reason == "too_large"


def test_a_page_without_tokens_is_an_error() -> None:
    with pytest.raises(ValueError):
        _ = ChangesPage([], None, None).following_token
