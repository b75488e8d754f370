"""Files that cannot be read fail with a reason a user can act on, decided from sizes and first
bytes before anything is inflated or parsed: an encrypted PDF, a decompression bomb in a PDF or
a Word file, a zip of thousands of parts, HTML nested past the parser's depth, an empty file,
and a file whose bytes are another kind than its name or type says."""

from __future__ import annotations

import io
import os
import zipfile

import pytest

from engram_extraction.domain.candidates import ExtractionFailed, Limits
from engram_extraction.domain.formats import DOCX, PDF, FormatLimits, read_docx
from engram_extraction.domain.reading import read
from tests.support.documents import (
    docx_bytes,
    encrypted_pdf,
    flate_bomb_pdf,
    many_parts_docx,
    nested_html,
    pdf_bytes,
    zip_bomb_docx,
)

pytestmark = pytest.mark.unit
LIMITS = Limits(max_columns=50, max_records=100, max_value_chars=1000)


def failure(content: bytes, mime: str, name: str) -> str:
    with pytest.raises(ExtractionFailed) as failed:
        read(content, mime, name, LIMITS)
    return str(failed.value)


def test_an_encrypted_pdf_fails_saying_so_whatever_its_cipher() -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes([["Secret terms."]]))))
    writer.encrypt(user_password="secret", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    for content in (encrypted_pdf(), out.getvalue()):
        assert failure(content, PDF, "secret.pdf") == (
            "the PDF is encrypted; upload it without a password"
        )


def test_a_pdf_whose_stream_inflates_without_end_is_refused_as_a_bomb() -> None:
    reason = failure(flate_bomb_pdf(), PDF, "bomb.pdf")
    assert "a decompression bomb" in reason


def test_a_word_file_whose_part_inflates_a_thousandfold_is_refused_as_a_zip_bomb() -> None:
    reason = failure(zip_bomb_docx(64 * 1024 * 1024), DOCX, "bomb.docx")
    assert reason.startswith("the Word document is a zip bomb")
    assert "the limit is 100" in reason


def test_a_zip_of_thousands_of_parts_is_refused_before_any_is_read() -> None:
    assert failure(many_parts_docx(), DOCX, "parts.docx") == (
        "the Word document holds more than 2000 parts"
    )


def test_an_xml_part_too_large_to_parse_is_refused() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", os.urandom(300_000).hex().encode())
    with pytest.raises(ExtractionFailed, match="an XML part of more than 500000 bytes"):
        read_docx(out.getvalue(), FormatLimits(max_xml_part_bytes=500_000))


def test_html_nested_two_hundred_thousand_deep_is_refused_at_the_parser_depth() -> None:
    reason = failure(nested_html(200_000), "text/html", "deep.html")
    assert reason == "the HTML page nests elements deeper than 256 levels"


@pytest.mark.parametrize("content", [b"", b"  \n\t"])
def test_an_empty_file_fails_saying_it_is_empty(content: bytes) -> None:
    assert failure(content, PDF, "empty.pdf") == "the document is empty"


def test_a_file_whose_bytes_are_another_kind_fails_saying_what_it_is() -> None:
    a_pdf, a_word_file = pdf_bytes([["Terms."]]), docx_bytes([("Normal", "Terms.")])
    assert failure(a_pdf, DOCX, "terms.docx") == (
        "the content is a PDF, not a Word (.docx) file; send it as application/pdf or name it .pdf"
    )
    assert failure(a_word_file, PDF, "terms.pdf").startswith(
        "the content is a zip archive (as a Word .docx file is), not a PDF"
    )
    assert failure(b"Plain words.", "application/octet-stream", "notes.pdf") == (
        "the content is UTF-8 text, not a PDF; send it as text/plain or name it .txt"
    )
    assert failure(a_pdf, "text/plain", "terms.txt").startswith("the content is a PDF")


def test_a_good_file_is_read_when_its_extension_and_bytes_agree() -> None:
    reading = read(pdf_bytes([["Refunds take five days."]]), PDF, "terms.pdf", LIMITS)
    assert reading.passages[0].text == "Refunds take five days."
