"""Google Drive over HTTP: the official client against the local stub, real Kafka and FerretDB."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.conftest import Infra
from tests.support.drive_stub import DriveStub
from tests.support.kafka import read_all, wait_for
from tests.support.polling import until_async
from tests.support.services import ServiceProcess

TENANT = "tnt_drive"
SAME_TIME = "2026-03-01T12:00:00.000Z"


def _connectors(
    service: Callable[..., ServiceProcess], drive: DriveStub, **extra: str
) -> ServiceProcess:
    settings = {
        "ENGRAM_CONNECTORS_GDRIVE_TENANT_ID": TENANT,
        "ENGRAM_CONNECTORS_GDRIVE_OAUTH_TOKEN": "stub-token",
        "ENGRAM_CONNECTORS_GDRIVE_ROOT_URL": drive.root_url,
        "ENGRAM_CONNECTORS_GDRIVE_POLL_INTERVAL_SECONDS": "0.3",
        "ENGRAM_CONNECTORS_GDRIVE_PAGE_SIZE": "1",
        **extra,
    }
    return service("connectors", **settings)


def _cursor(db: Any) -> str | None:
    row = db.drive_cursors.find_one({"_id": f"{TENANT}:gdrive:default", "tenant_id": TENANT})
    return None if row is None else str(row["page_token"])


def _of(event_type: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m.get("event_type") == event_type


async def _started(
    service: Callable[..., ServiceProcess], drive: DriveStub, db: Any, **extra: str
) -> ServiceProcess:
    """Start the connector and wait until it stored the feed's start token."""
    proc = _connectors(service, drive, **extra)
    await until_async(lambda: _cursor(db) is not None, "the stored start token", 30, 0.2)
    return proc


async def test_two_files_sharing_one_modified_time_are_both_submitted(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drive: DriveStub,
    connectors_db: Any,
    documents_topic: str,
) -> None:
    await _started(service, drive, connectors_db)
    first = drive.add_file("a.csv", b"id\nA\n", modified_time=SAME_TIME)
    second = drive.add_file("b.csv", b"id\nB\n", modified_time=SAME_TIME)

    submitted = await wait_for(infra.bootstrap, documents_topic, _of("document.submitted"), count=2)

    assert sorted(m["payload"]["source_item_id"] for m in submitted) == sorted([first, second])
    assert all(m["tenant_id"] == TENANT and m["payload"]["source"] == "gdrive" for m in submitted)
    await until_async(
        lambda: _cursor(connectors_db) == drive.start_token(),
        "the cursor at the end of the feed",
        30,
        0.2,
    )
    assert any("alt=media" in r or "/files/" in r for r in drive.requests)


async def test_a_trashed_file_is_deleted_and_tombstoned(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drive: DriveStub,
    connectors_db: Any,
    documents_topic: str,
) -> None:
    service("ingest")
    connectors = await _started(service, drive, connectors_db)
    file_id = drive.add_file("carriers.csv", b"id,name\nc1,Canary Carrier\n")
    (submitted,) = await wait_for(infra.bootstrap, documents_topic, _of("document.ingested"))

    drive.trash(file_id)
    (deleted,) = await wait_for(infra.bootstrap, documents_topic, _of("document.deleted"))
    (tombstoned,) = await wait_for(infra.bootstrap, documents_topic, _of("document.tombstoned"))

    document_id = submitted["payload"]["document_id"]
    assert deleted["payload"] == {
        "document_id": document_id,
        "source": "gdrive",
        "reason": "drive_trashed",
        "prune_job_id": None,
    }
    assert tombstoned["payload"]["document_id"] == document_id
    assert "Canary Carrier" not in connectors.logs()
    assert "stub-token" not in connectors.logs()


async def test_removed_and_unreadable_files_are_deleted_with_their_reason(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drive: DriveStub,
    connectors_db: Any,
    documents_topic: str,
) -> None:
    await _started(service, drive, connectors_db)
    removed = drive.add_file("a.csv", b"id\nA\n")
    revoked = drive.add_file("b.csv", b"id\nB\n")
    await wait_for(infra.bootstrap, documents_topic, _of("document.submitted"), count=2)

    drive.remove(removed)
    drive.revoke(revoked)
    deleted = await wait_for(infra.bootstrap, documents_topic, _of("document.deleted"), count=2)

    reasons = sorted(m["payload"]["reason"] for m in deleted)
    assert reasons == ["drive_removed", "permission_lost"]


async def test_a_changed_checksum_resubmits_a_new_version_of_the_same_document(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drive: DriveStub,
    connectors_db: Any,
    documents_topic: str,
) -> None:
    await _started(service, drive, connectors_db)
    file_id = drive.add_file("carriers.csv", b"id,name\nc1,Acme\n")
    await wait_for(infra.bootstrap, documents_topic, _of("document.submitted"))
    drive.update_file(file_id, b"id,name\nc1,Acme Corp\n")

    first, second = await wait_for(
        infra.bootstrap, documents_topic, _of("document.submitted"), count=2
    )
    assert first["payload"]["document_id"] == second["payload"]["document_id"]
    assert first["payload"]["version"] != second["payload"]["version"]
    assert first["event_id"] != second["event_id"]


async def test_google_docs_are_exported_as_html_and_sheets_as_csv(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drive: DriveStub,
    connectors_db: Any,
    documents_topic: str,
) -> None:
    await _started(service, drive, connectors_db)
    page = b"<html><body><h1>Owners</h1><p>owner: acme</p></body></html>"
    drive.add_file("Notes", page, mime_type="application/vnd.google-apps.document")
    drive.add_file("Rates", b"id,rate\n1,2\n", mime_type="application/vnd.google-apps.spreadsheet")

    submitted = await wait_for(infra.bootstrap, documents_topic, _of("document.submitted"), count=2)

    assert sorted(m["payload"]["mime"] for m in submitted) == ["text/csv", "text/html"]
    assert any("/export" in r for r in drive.requests)


async def test_the_cursor_advances_only_after_the_page_is_submitted(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drive: DriveStub,
    connectors_db: Any,
    documents_topic: str,
) -> None:
    await _started(service, drive, connectors_db)
    start = _cursor(connectors_db)
    file_id = drive.add_file("carriers.csv", b"id\nc1\n")
    drive.fail(f"/files/{file_id}", status=503, times=10_000)

    await until_async(
        lambda: sum(f"/files/{file_id}" in r for r in drive.requests) >= 4,
        "four failed fetches of the file",
        30,
        0.2,
    )
    messages = await read_all(infra.bootstrap, documents_topic, settle=0.6)
    assert not [m for m in messages if m and m.get("event_type") == "document.submitted"]
    assert _cursor(connectors_db) == start, "a failing page never moves the cursor"

    drive.clear_faults()
    (submitted,) = await wait_for(infra.bootstrap, documents_topic, _of("document.submitted"))
    await until_async(
        lambda: _cursor(connectors_db) == drive.start_token(),
        "the cursor at the end of the feed",
        30,
        0.2,
    )
    assert submitted["payload"]["source_item_id"] == file_id


async def test_a_restart_resumes_from_the_stored_cursor_without_resubmitting(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drive: DriveStub,
    connectors_db: Any,
    documents_topic: str,
) -> None:
    proc = await _started(service, drive, connectors_db)
    earlier = drive.add_file("a.csv", b"id\nA\n")
    await wait_for(infra.bootstrap, documents_topic, _of("document.submitted"))
    await until_async(
        lambda: _cursor(connectors_db) == drive.start_token(),
        "the cursor at the end of the feed",
        30,
        0.2,
    )

    proc.kill9()
    later = drive.add_file("b.csv", b"id\nB\n")
    proc.start()

    await wait_for(
        infra.bootstrap,
        documents_topic,
        lambda m: _of("document.submitted")(m) and m["payload"]["source_item_id"] == later,
    )
    await until_async(
        lambda: _cursor(connectors_db) == drive.start_token(),
        "the restarted connector's cursor to reach the end of the feed",
        30,
        0.2,
    )
    again = await read_all(infra.bootstrap, documents_topic, settle=1.0)
    submitted = [m for m in again if m and m.get("event_type") == "document.submitted"]
    assert sorted(m["payload"]["source_item_id"] for m in submitted) == sorted([earlier, later]), (
        "the first file is not submitted again"
    )
