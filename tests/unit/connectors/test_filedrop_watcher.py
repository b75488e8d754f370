"""The file-drop watcher over a temporary folder, with fake Kafka and MongoDB."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engram_connectors.adapters.drop_folder import DropRoot
from engram_connectors.service.filedrop import FileDropWatcher
from tests.unit.connectors.fakes import FakeLedger, FakePublisher

pytestmark = pytest.mark.unit

CSV = b"id,name\nc1,Acme\n"


def _watcher(root: Path, ledger: FakeLedger, publisher: FakePublisher) -> FileDropWatcher:
    return FileDropWatcher(DropRoot(root), ledger, publisher, max_bytes=1000, interval=0.01)


async def _two_passes(watcher: FileDropWatcher) -> None:
    await watcher.scan_once()
    await watcher.scan_once()


async def test_a_stable_file_is_submitted_once_and_moved(tmp_path: Path) -> None:
    inbox = tmp_path / "tnt_a"
    inbox.mkdir()
    (inbox / "carriers.csv").write_bytes(CSV)
    ledger, publisher = FakeLedger(), FakePublisher()
    watcher = _watcher(tmp_path, ledger, publisher)
    await watcher.scan_once()
    assert publisher.published == [], "one scan is not enough to call a file stable"
    await watcher.scan_once()
    (event,) = publisher.published
    assert event.payload.mime == "text/csv" and event.tenant_id == "tnt_a"
    assert event.payload.source == "file_drop" and event.payload.source_item_id == "carriers.csv"
    assert (inbox / "processed" / "carriers.csv").read_bytes() == CSV
    assert not (inbox / "carriers.csv").exists()
    assert [row["status"] for row in ledger.rows.values()] == ["moved"]


async def test_the_same_content_dropped_again_is_not_resubmitted(tmp_path: Path) -> None:
    inbox = tmp_path / "tnt_a"
    inbox.mkdir()
    ledger, publisher = FakeLedger(), FakePublisher()
    watcher = _watcher(tmp_path, ledger, publisher)
    (inbox / "carriers.csv").write_bytes(CSV)
    await _two_passes(watcher)
    (inbox / "carriers.csv").write_bytes(CSV)
    await _two_passes(watcher)
    assert len(publisher.published) == 1
    assert {p.name for p in (inbox / "processed").iterdir()} == {
        "carriers.csv",
        f"carriers.{publisher.published[0].payload.version}.csv",
    }


async def test_a_failed_publish_leaves_the_file_and_the_retry_uses_the_same_event_id(
    tmp_path: Path,
) -> None:
    inbox = tmp_path / "tnt_a"
    inbox.mkdir()
    (inbox / "carriers.csv").write_bytes(CSV)
    ledger, publisher = FakeLedger(), FakePublisher(fail_next=1)
    watcher = _watcher(tmp_path, ledger, publisher)
    await _two_passes(watcher)
    assert (inbox / "carriers.csv").exists()
    (row,) = ledger.rows.values()
    assert row["status"] == "submitting"
    await watcher.scan_once()
    (event,) = publisher.published
    assert str(event.event_id) == row["event_id"]
    assert (inbox / "processed" / "carriers.csv").exists()


async def test_a_restart_finishes_the_move_without_resubmitting(tmp_path: Path) -> None:
    inbox = tmp_path / "tnt_a"
    inbox.mkdir()
    (inbox / "carriers.csv").write_bytes(CSV)
    (inbox / "processed").write_text("not a folder: the move fails")
    ledger, publisher = FakeLedger(), FakePublisher()
    await _two_passes(_watcher(tmp_path, ledger, publisher))
    assert len(publisher.published) == 1 and (inbox / "carriers.csv").exists()
    (inbox / "processed").unlink()
    restarted = _watcher(tmp_path, ledger, publisher)
    await _two_passes(restarted)
    assert len(publisher.published) == 1
    assert (inbox / "processed" / "carriers.csv").exists()


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.csv", b"", "empty"),
        ("binary.csv", b"\x00\x01\x02garbage", "binary"),
        ("latin1.csv", "id,name\nc1,Zürich\n".encode("latin-1"), "invalid_utf8"),
        ("big.csv", b"x" * 1001, "too_large"),
        ("photo.png", b"\x89PNG", "unsupported_type"),
        ("terms.docx", b"%PDF-1.7\n%\xe2\xe3", "content_mismatch"),
        ("notes.pdf", b"just words\n", "content_mismatch"),
    ],
)
async def test_bad_files_go_to_failed_with_an_error_report(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    inbox = tmp_path / "tnt_a"
    inbox.mkdir()
    (inbox / name).write_bytes(content)
    publisher = FakePublisher()
    await _two_passes(_watcher(tmp_path, FakeLedger(), publisher))
    assert publisher.published == []
    assert (inbox / "failed" / name).read_bytes() == content
    report = json.loads((inbox / "failed" / f"{name}.error.json").read_text())
    assert report["reason"] == reason
    assert "Zürich" not in json.dumps(report)


@pytest.mark.parametrize(
    ("name", "content", "mime"),
    [
        ("terms.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3", "application/pdf"),
        (
            "terms.docx",
            b"PK\x03\x04\x14\x00\x00",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        ("page.htm", "<p>caf\xe9</p>".encode("latin-1"), "text/html"),
    ],
)
async def test_pdf_word_and_html_files_are_submitted_with_their_types(
    tmp_path: Path, name: str, content: bytes, mime: str
) -> None:
    inbox = tmp_path / "tnt_a"
    inbox.mkdir()
    (inbox / name).write_bytes(content)
    publisher = FakePublisher()
    await _two_passes(_watcher(tmp_path, FakeLedger(), publisher))
    (event,) = publisher.published
    assert event.payload.mime == mime and event.payload.name == name


async def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_bytes(b"id\nsecret\n")
    root = tmp_path / "drop"
    inbox = root / "tnt_a"
    inbox.mkdir(parents=True)
    os.symlink(outside / "secret.csv", inbox / "link.csv")
    os.symlink(outside, inbox / "linked_dir")
    os.symlink("../../outside", inbox / "up")
    os.symlink(outside, root / "tnt_b")
    publisher = FakePublisher()
    await _two_passes(_watcher(root, FakeLedger(), publisher))
    assert publisher.published == []
    assert (outside / "secret.csv").exists()
    assert not (inbox / "processed").exists() and not (inbox / "failed").exists()


async def test_only_valid_and_allowed_tenant_folders_are_watched(tmp_path: Path) -> None:
    for tenant in ("tnt_a", "tnt_b", ".hidden", "bad name"):
        (tmp_path / tenant).mkdir()
        (tmp_path / tenant / "a.csv").write_bytes(CSV)
    publisher = FakePublisher()
    watcher = FileDropWatcher(
        DropRoot(tmp_path, frozenset({"tnt_a"})),
        FakeLedger(),
        publisher,
        max_bytes=1000,
        interval=0.01,
    )
    await _two_passes(watcher)
    assert [e.tenant_id for e in publisher.published] == ["tnt_a"]


async def test_files_in_sub_folders_keep_their_relative_path(tmp_path: Path) -> None:
    (tmp_path / "tnt_a" / "2026" / "q1").mkdir(parents=True)
    (tmp_path / "tnt_a" / "2026" / "q1" / "rows.jsonl").write_bytes(b'{"id": 1}\n')
    publisher = FakePublisher()
    await _two_passes(_watcher(tmp_path, FakeLedger(), publisher))
    (event,) = publisher.published
    assert event.payload.source_item_id == "2026/q1/rows.jsonl"
    assert event.payload.name == "rows.jsonl"
    assert event.payload.mime == "application/x-ndjson"
    assert (tmp_path / "tnt_a" / "processed" / "2026" / "q1" / "rows.jsonl").exists()
