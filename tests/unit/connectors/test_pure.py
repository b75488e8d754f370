"""Pure parts of the connectors: mime mapping, path safety, stability, content checks, ids."""

from __future__ import annotations

import pytest

from engram_connectors.domain.content import check_content
from engram_connectors.domain.identity import (
    deletion_event_id,
    document_id,
    submission_event_id,
    version_of,
)
from engram_connectors.domain.mime import mime_for_drive, mime_for_name
from engram_connectors.domain.paths import is_ignored_name, is_within, safe_relative_path
from engram_connectors.domain.stability import Observation, StabilityTracker

pytestmark = pytest.mark.unit
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("carriers.csv", "text/csv"),
        ("CARRIERS.CSV", "text/csv"),
        ("rows.tsv", "text/tab-separated-values"),
        ("a.json", "application/json"),
        ("a.ndjson", "application/x-ndjson"),
        ("a.jsonl", "application/x-ndjson"),
        ("notes.md", "text/markdown"),
        ("notes.txt", "text/plain"),
        ("terms.PDF", "application/pdf"),
        ("terms.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("page.html", "text/html"),
        ("page.htm", "text/html"),
        ("legacy.doc", None),
        ("image.png", None),
        ("archive.csv.gz", None),
        ("no_extension", None),
    ],
)
def test_mime_from_extension(name: str, mime: str | None) -> None:
    assert mime_for_name(name) == mime


def test_drive_mime_prefers_declared_type_then_export_then_extension() -> None:
    assert mime_for_drive("text/csv", "x.bin") == "text/csv"
    assert mime_for_drive("application/vnd.google-apps.document", "Doc") == "text/html"
    assert mime_for_drive("application/pdf", "Terms") == "application/pdf"
    assert mime_for_drive("application/vnd.google-apps.spreadsheet", "Sheet") == "text/csv"
    assert mime_for_drive("application/vnd.google-apps.presentation", "x.csv") is None
    assert mime_for_drive("application/octet-stream", "rows.ndjson") == "application/x-ndjson"
    assert mime_for_drive("image/png", "photo.png") is None


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("carriers.csv", "carriers.csv"),
        ("sub/dir/carriers.csv", "sub/dir/carriers.csv"),
        ("../escape.csv", None),
        ("sub/../../escape.csv", None),
        ("/etc/passwd", None),
        ("./a.csv", None),
        ("a//b.csv", None),
        ("processed/a.csv", None),
        ("failed/a.csv", None),
        ("bad\nname.csv", None),
        ("back\\slash.csv", None),
        ("bad\udcffbytes.csv", None),
        ("", None),
        ("x" * 2000, None),
    ],
)
def test_safe_relative_path(relative: str, expected: str | None) -> None:
    assert safe_relative_path(relative) == expected


def test_within_needs_a_separator_boundary() -> None:
    assert is_within("/drop/acme", "/drop/acme/a.csv")
    assert not is_within("/drop/acme", "/drop/acme-evil/a.csv")
    assert not is_within("/drop/acme", "/etc/passwd")


def test_hidden_and_partial_files_are_ignored() -> None:
    assert is_ignored_name(".carriers.csv.swp")
    assert is_ignored_name("upload.csv.part")
    assert is_ignored_name("~lock.csv")
    assert not is_ignored_name("carriers.csv")


def test_a_file_is_ready_only_after_two_identical_scans() -> None:
    tracker = StabilityTracker()
    assert tracker.observe({"a.csv": Observation(10, 1)}) == []
    assert tracker.observe({"a.csv": Observation(20, 2)}) == [], "still being written"
    assert tracker.observe({"a.csv": Observation(20, 2)}) == ["a.csv"]


def test_a_touched_file_waits_again() -> None:
    tracker = StabilityTracker()
    tracker.observe({"a.csv": Observation(10, 1)})
    tracker.observe({"a.csv": Observation(10, 2)})
    assert tracker.observe({"a.csv": Observation(10, 2)}) == ["a.csv"]


def test_forgotten_and_vanished_paths_start_over() -> None:
    tracker = StabilityTracker()
    tracker.observe({"a.csv": Observation(1, 1), "b.csv": Observation(1, 1)})
    tracker.forget("a.csv")
    assert tracker.observe({"a.csv": Observation(1, 1)}) == []
    assert tracker.observe({"b.csv": Observation(1, 1)}) == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty"),
        (b"  \n\t", "empty"),
        (b"id,name\x00\n", "binary"),
        (b"id,name\n\xff\xfe", "invalid_utf8"),
        (b"x" * 11, "too_large"),
        (b"%PDF-1.7\n", "content_mismatch"),
    ],
)
def test_bad_content_is_refused_with_a_reason(content: bytes, reason: str) -> None:
    rejection = check_content(content, "text/csv", max_bytes=10)
    assert rejection is not None and rejection.reason == reason


def test_text_is_accepted() -> None:
    assert check_content("id,name\nc1,Zürich\n".encode(), "text/csv", max_bytes=100) is None


def test_pdf_word_and_html_bytes_are_accepted_as_what_they_are() -> None:
    assert check_content(b"%PDF-1.7\n\xff\x00", "application/pdf", max_bytes=100) is None
    assert check_content(b"PK\x03\x04\x00\xff", DOCX, max_bytes=100) is None
    assert check_content("<p>caf\xe9</p>".encode("latin-1"), "text/html", max_bytes=100) is None


@pytest.mark.parametrize(
    ("content", "mime", "said"),
    [
        (b"%PDF-1.7\n", DOCX, "the content is a PDF, not a Word (.docx) file"),
        (b"PK\x03\x04\x00", "application/pdf", "the content is a zip archive"),
        (b"just words", "application/pdf", "the content is UTF-8 text, not a PDF"),
    ],
)
def test_a_file_named_as_another_kind_is_refused_saying_what_it_is(
    content: bytes, mime: str, said: str
) -> None:
    rejection = check_content(content, mime, max_bytes=100)
    assert rejection is not None and rejection.reason == "content_mismatch"
    assert rejection.detail.startswith(said)


def test_ids_are_deterministic_and_distinct() -> None:
    sha = "a" * 64
    assert document_id("t1", "file_drop", "a.csv") == document_id("t1", "file_drop", "a.csv")
    assert document_id("t1", "file_drop", "a.csv") != document_id("t2", "file_drop", "a.csv")
    assert document_id("t1", "file_drop", "a.csv") != document_id("t1", "gdrive", "a.csv")
    assert version_of(sha) == "a" * 16
    first = submission_event_id("t1", "file_drop", "a.csv", sha)
    assert first == submission_event_id("t1", "file_drop", "a.csv", sha)
    assert first != submission_event_id("t1", "file_drop", "a.csv", "b" * 64)
    assert first != submission_event_id("t1", "gdrive", "a.csv", sha, "7")
    assert deletion_event_id("t1", "gdrive", "f", "1") != deletion_event_id(
        "t1", "gdrive", "f", "2"
    )
