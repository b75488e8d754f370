"""File-drop over the real broker and database: submit once, move out, refuse bad files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Infra
from tests.support.kafka import read_all, wait_for
from tests.support.polling import until_async
from tests.support.services import ServiceProcess

TENANT = "tnt_drop"
CSV = b"id,name\nc1,Acme Freight\nc2,Bolt Logistics\n"
FAST = {"ENGRAM_CONNECTORS_DROP_SCAN_INTERVAL_SECONDS": "0.2"}


def _connectors(service: Callable[..., ServiceProcess], root: Path, **extra: str) -> ServiceProcess:
    return service("connectors", ENGRAM_CONNECTORS_DROP_ROOT=str(root), **FAST, **extra)


def _submitted(message: dict[str, Any]) -> bool:
    return message.get("event_type") == "document.submitted"


async def test_a_dropped_csv_is_submitted_once_ingested_and_moved(
    service: Callable[..., ServiceProcess], infra: Infra, drop_root: Path, documents_topic: str
) -> None:
    service("ingest")
    connectors = _connectors(service, drop_root)
    inbox = drop_root / TENANT
    inbox.mkdir()
    (inbox / "carriers.csv").write_bytes(CSV)

    (submitted,) = await wait_for(infra.bootstrap, documents_topic, _submitted)
    ingested = await wait_for(
        infra.bootstrap, documents_topic, lambda m: m.get("event_type") == "document.ingested"
    )
    await until_async(
        lambda: (inbox / "processed" / "carriers.csv").exists(), "carriers.csv moved", 30, 0.2
    )

    assert submitted["tenant_id"] == TENANT
    payload = submitted["payload"]
    assert payload["source"] == "file_drop" and payload["mime"] == "text/csv"
    assert payload["source_item_id"] == "carriers.csv"
    assert ingested[0]["payload"]["document_id"] == payload["document_id"]
    assert not (inbox / "carriers.csv").exists()
    messages = await read_all(infra.bootstrap, documents_topic, settle=2.0)
    assert len([m for m in messages if m and _submitted(m)]) == 1
    assert "Acme Freight" not in connectors.logs(), "logs carry ids and hashes, never content"


async def test_the_same_file_dropped_twice_is_submitted_once(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drop_root: Path,
    documents_topic: str,
    connectors_db: Any,
) -> None:
    _connectors(service, drop_root)
    inbox = drop_root / TENANT
    inbox.mkdir()
    (inbox / "carriers.csv").write_bytes(CSV)
    await wait_for(infra.bootstrap, documents_topic, _submitted)
    await until_async(
        lambda: (inbox / "processed" / "carriers.csv").exists(), "carriers.csv moved", 30, 0.2
    )

    (inbox / "carriers.csv").write_bytes(CSV)
    await until_async(
        lambda: not (inbox / "carriers.csv").exists(), "the copy out of the inbox", 30, 0.2
    )

    messages = await read_all(infra.bootstrap, documents_topic, settle=2.0)
    assert len([m for m in messages if m and _submitted(m)]) == 1
    assert len(list((inbox / "processed").iterdir())) == 2, "both copies left the inbox"
    assert connectors_db.drop_submissions.count_documents({"tenant_id": TENANT}) == 1


async def test_bad_files_land_in_failed_and_the_watcher_keeps_going(
    service: Callable[..., ServiceProcess], infra: Infra, drop_root: Path, documents_topic: str
) -> None:
    _connectors(service, drop_root, ENGRAM_CONNECTORS_DROP_MAX_BYTES="4096")
    inbox = drop_root / TENANT
    inbox.mkdir()
    bad = {
        "empty.csv": (b"", "empty"),
        "garbage.csv": (os.urandom(512) + b"\x00", "binary"),
        "latin1.csv": ("id,city\n1,Zürich\n".encode("latin-1"), "invalid_utf8"),
        "huge.csv": (b"id\n" + b"1\n" * 4000, "too_large"),
        "slides.pptx": (b"PK\x03\x04", "unsupported_type"),
    }
    for name, (content, _) in bad.items():
        (inbox / name).write_bytes(content)

    await until_async(
        lambda: all((inbox / "failed" / f"{n}.error.json").exists() for n in bad),
        "an error report for each bad file",
        30,
        0.2,
    )
    for name, (content, reason) in bad.items():
        report = json.loads((inbox / "failed" / f"{name}.error.json").read_text())
        assert report["reason"] == reason, name
        assert (inbox / "failed" / name).read_bytes() == content
        assert not (inbox / name).exists()

    (inbox / "good.csv").write_bytes(CSV)
    (submitted,) = await wait_for(infra.bootstrap, documents_topic, _submitted)
    assert submitted["payload"]["name"] == "good.csv"


async def test_symlinks_and_paths_outside_the_folder_are_ignored(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drop_root: Path,
    documents_topic: str,
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_bytes(b"id\nsecret\n")
    inbox = drop_root / TENANT
    inbox.mkdir()
    os.symlink(outside / "secret.csv", inbox / "link.csv")
    os.symlink("../../outside", inbox / "escape")
    os.symlink(outside, drop_root / "tnt_symlinked")
    _connectors(service, drop_root)
    (inbox / "real.csv").write_bytes(CSV)

    (submitted,) = await wait_for(infra.bootstrap, documents_topic, _submitted)
    (inbox / "later.csv").write_bytes(b"id,name\nc3,Later Haulage\n")
    await wait_for(infra.bootstrap, documents_topic, _submitted, count=2)
    await until_async(
        lambda: (inbox / "processed" / "later.csv").exists(),
        "a scan after the first one to finish (it moved a file dropped later)",
        30,
        0.2,
    )
    messages = await read_all(infra.bootstrap, documents_topic, settle=1.0)

    assert submitted["payload"]["source_item_id"] == "real.csv"
    names = sorted(m["payload"]["source_item_id"] for m in messages if m and _submitted(m))
    assert names == ["later.csv", "real.csv"], "no symlink or escaping path was submitted"
    assert (outside / "secret.csv").exists() and (inbox / "link.csv").is_symlink()
    assert not (inbox / "failed").exists()


async def test_kill9_after_submission_neither_loses_nor_resubmits(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drop_root: Path,
    documents_topic: str,
    connectors_db: Any,
) -> None:
    inbox = drop_root / TENANT
    inbox.mkdir()
    (inbox / "processed").write_text("a file where the folder should be: moving fails")
    connectors = _connectors(service, drop_root)
    (inbox / "carriers.csv").write_bytes(CSV)

    (submitted,) = await wait_for(infra.bootstrap, documents_topic, _submitted)
    await until_async(
        lambda: (
            connectors_db.drop_submissions.find_one({"tenant_id": TENANT, "status": "submitted"})
            is not None
        ),
        "the submission recorded",
        30,
        0.2,
    )
    assert (inbox / "carriers.csv").exists(), "accepted but not yet moved"

    connectors.kill9()
    (inbox / "processed").unlink()
    connectors.start()
    await until_async(
        lambda: (inbox / "processed" / "carriers.csv").exists(), "carriers.csv moved", 30, 0.2
    )

    messages = await read_all(infra.bootstrap, documents_topic, settle=2.0)
    assert [m["event_id"] for m in messages if m and _submitted(m)] == [submitted["event_id"]]
    row = connectors_db.drop_submissions.find_one({"tenant_id": TENANT})
    assert row["status"] == "moved" and row["event_id"] == submitted["event_id"]


async def test_kill9_mid_batch_loses_nothing_and_submits_each_file_once(
    service: Callable[..., ServiceProcess],
    infra: Infra,
    drop_root: Path,
    documents_topic: str,
) -> None:
    inbox = drop_root / TENANT
    inbox.mkdir()
    connectors = _connectors(service, drop_root)
    count = 30
    for n in range(count):
        (inbox / f"batch_{n:02d}.csv").write_bytes(b"id,n\nrow,%d\n" % n)

    await wait_for(infra.bootstrap, documents_topic, _submitted, count=3)
    connectors.kill9()
    connectors.start()
    await until_async(
        lambda: len(list((inbox / "processed").glob("*.csv"))) == count,
        "every file moved",
        60,
        0.2,
    )

    messages = [m for m in await read_all(infra.bootstrap, documents_topic, settle=2.0) if m]
    submitted = [m for m in messages if _submitted(m)]
    by_item: dict[str, set[str]] = {}
    for message in submitted:
        by_item.setdefault(message["payload"]["source_item_id"], set()).add(message["event_id"])
    assert len(by_item) == count, "no file lost"
    assert all(len(ids) == 1 for ids in by_item.values()), "a re-send reuses the event id"
    assert not list(inbox.glob("*.csv"))
