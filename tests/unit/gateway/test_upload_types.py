"""An upload sent without a type is typed by its file extension; only an unknown one is a 415."""

from __future__ import annotations

import pytest

from engram_client.uploads import MIME_BY_SUFFIX as CLIENT_TABLE
from engram_events.mimes import MIME_BY_SUFFIX
from engram_gateway.domain.documents import DocumentRejected, check_content, resolve_mime

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "untyped", ["", "application/octet-stream", "application/octet-stream; x=1"]
)
def test_an_untyped_part_takes_the_type_its_extension_names(untyped: str) -> None:
    assert resolve_mime(untyped, "suppliers.CSV") == "text/csv"
    assert resolve_mime(untyped, "notes.md") == "text/markdown"
    assert resolve_mime(untyped, "events.jsonl") == "application/x-ndjson"


def test_a_declared_type_is_kept_without_its_parameters() -> None:
    assert resolve_mime("text/plain; charset=utf-8", "data.csv") == "text/plain"


def test_an_unknown_extension_without_a_type_says_what_to_send() -> None:
    with pytest.raises(DocumentRejected) as refused:
        resolve_mime("application/octet-stream", "photo.jpeg")
    assert refused.value.status == 415
    assert ".csv" in refused.value.detail and "text/csv" in refused.value.detail
    assert "type=" in refused.value.detail


def test_the_client_guesses_the_types_the_gateway_reads() -> None:
    assert CLIENT_TABLE == MIME_BY_SUFFIX


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("terms.pdf", "application/pdf"),
        ("terms.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("page.html", "text/html"),
        ("page.HTM", "text/html"),
    ],
)
def test_prose_documents_are_typed_by_their_extension(name: str, mime: str) -> None:
    assert resolve_mime("application/octet-stream", name) == mime


def test_a_pdf_and_a_word_file_are_accepted_as_bytes_not_as_utf8_text() -> None:
    check_content(b"%PDF-1.4\n\xff\xfe\x00binary", "application/pdf", 1000)
    docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    check_content(b"PK\x03\x04\x00\xff", docx, 1000)
    check_content("<p>caf\xe9</p>".encode("latin-1"), "text/html", 1000)


DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@pytest.mark.parametrize(
    ("content", "name", "said"),
    [
        (b"just text", "terms.pdf", "the content is UTF-8 text, not a PDF; send it as text/plain"),
        (
            b"%PDF-1.7\n",
            "terms.docx",
            "is a PDF, not a Word (.docx) file; send it as application/pdf",
        ),
        (
            b"PK\x03\x04\x14\x00",
            "terms.pdf",
            "is a zip archive (as a Word .docx file is), not a PDF",
        ),
        (
            b"%PDF-1.7\n",
            "terms.txt",
            "is a PDF, not text/plain; send it as application/pdf or name it .pdf",
        ),
        (b"PK\x03\x04\x14\x00", "page.html", f"not text/html; send it as {DOCX} or name it .docx"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "old.docx", "a legacy Office file (.doc or .xls)"),
    ],
)
def test_a_file_whose_bytes_are_another_kind_is_refused_saying_what_it_is(
    content: bytes, name: str, said: str
) -> None:
    with pytest.raises(DocumentRejected) as refused:
        check_content(content, resolve_mime("application/octet-stream", name), 1000)
    assert (refused.value.status, refused.value.kind) == (422, "content-mismatch")
    assert said in refused.value.detail


def test_an_empty_file_is_refused_at_the_door() -> None:
    for empty in (b"", b" \n"):
        with pytest.raises(DocumentRejected) as refused:
            check_content(empty, "application/pdf", 1000)
        assert (refused.value.status, refused.value.kind) == (422, "empty-document")


def test_a_pdf_over_the_size_limit_is_still_a_413() -> None:
    with pytest.raises(DocumentRejected) as refused:
        check_content(b"%PDF-" + b"x" * 100, "application/pdf", 50)
    assert refused.value.status == 413
