"""PDF, Word and HTML read as laid-out text with pages and headings; what cannot be read fails
with a reason a user can act on; prose documents are read for passages by type, then extension."""

from __future__ import annotations

import io
import zipfile

import pytest

from engram_extraction.domain.candidates import Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors import Unstructured
from engram_extraction.domain.formats import (
    DOCX,
    PDF,
    FormatLimits,
    read_docx,
    read_html,
    read_pdf,
    storable,
)
from engram_extraction.domain.passages import Budget, split
from engram_extraction.domain.reading import prose_kind, read
from tests.support.documents import blank_pdf, docx_bytes, encrypted_pdf, pdf_bytes

pytestmark = pytest.mark.unit
LIMITS = Limits(max_columns=50, max_records=100, max_value_chars=1000)
RETURNS_MD = (
    b"# Returns policy\n\nOpened electronics can be returned within 14 days.\n\n"
    b"## Damaged goods\n\nCall us within 48 hours.\n"
)


def test_a_pdf_keeps_its_pages_as_locators_and_its_paragraphs() -> None:
    content = pdf_bytes(
        [
            ["Returns policy", "", "Items may be returned within 30 days.", "Opened electron-"],
            ["ics within 14 days.", "", "Refunds take five days."],
        ]
    )
    layout = read_pdf(content)
    texts = [(layout.text[b.start : b.end], b.page) for b in layout.blocks]
    assert texts[0] == ("Returns policy", 1)
    assert ("Refunds take five days.", 2) in texts
    passages = split(layout)
    assert passages[0].page == 1
    assert passages[-1].page_end == 2


def test_a_pdf_without_a_text_layer_fails_saying_so() -> None:
    with pytest.raises(ExtractionFailed, match="no text layer"):
        read_pdf(blank_pdf(2))


def test_an_encrypted_pdf_fails_saying_so() -> None:
    with pytest.raises(ExtractionFailed, match="encrypted"):
        read_pdf(encrypted_pdf())


def test_a_broken_pdf_fails_without_its_content() -> None:
    with pytest.raises(ExtractionFailed, match="the PDF cannot be read"):
        read_pdf(b"%PDF-1.4\nnot really a pdf at all")


def test_a_pdf_over_the_page_limit_is_refused() -> None:
    with pytest.raises(ExtractionFailed, match="3 pages; the limit is 2"):
        read_pdf(pdf_bytes([["a."], ["b."], ["c."]]), FormatLimits(max_pages=2))


def test_word_headings_come_from_styles_and_lists_and_tables_are_kept() -> None:
    content = docx_bytes(
        [
            ("Title", "Shop terms"),
            ("Heading 1", "Returns policy"),
            ("Normal", "Items may be returned within 30 days."),
            ("List Bullet", "Opened electronics: 14 days."),
            ("Heading 2", "Damaged goods"),
            ("table", "Item|Days"),
            ("Heading 1", "Shipping"),
            ("Normal", "We ship in two days."),
        ]
    )
    layout = read_docx(content)
    kinds = [(b.kind, layout.text[b.start : b.end]) for b in layout.blocks]
    assert ("item", "Opened electronics: 14 days.") in kinds
    assert ("paragraph", "Item | Days") in kinds
    paths = [p.heading_path for p in split(layout)]
    assert paths == [
        ("Shop terms", "Returns policy"),
        ("Shop terms", "Returns policy", "Damaged goods"),
        ("Shop terms", "Shipping"),
    ]


def test_a_word_file_that_unpacks_too_large_is_refused_before_parsing() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"\x20" * 200_000)
    with pytest.raises(ExtractionFailed, match="unpacks to more than"):
        read_docx(out.getvalue(), FormatLimits(max_unzipped_bytes=100_000))


def test_a_file_that_is_not_a_zip_is_not_a_word_document() -> None:
    with pytest.raises(ExtractionFailed, match=r"not a valid \.docx"):
        read_docx(b"PK\x03\x04 truncated")


PAGE = b"""<!doctype html><html><head><title>Shop</title><style>p{color:red}</style>
<script>track("visit")</script></head><body>
<header>Acme Shop</header><nav><a href="/">Home</a> | <a href="/cart">Cart</a></nav>
<main><h1>Returns policy</h1><p>Opened <b>electronics</b> can be returned within 14 days.</p>
<ul><li>Keep the receipt.</li><li>Use the original box.</li></ul>
<h2>Damaged goods</h2><div>Call us <p>within 48 hours.</p></div></main>
<aside>Related: gift cards</aside><footer>(c) 2026 Acme</footer></body></html>"""


def test_html_keeps_the_main_content_and_its_headings_and_drops_the_boilerplate() -> None:
    layout = read_html(PAGE)
    for boilerplate in ("Acme Shop", "Home", "Cart", "track", "color", "gift cards", "(c) 2026"):
        assert boilerplate not in layout.text
    passages = split(layout)
    assert [p.heading_path for p in passages] == [
        ("Returns policy",),
        ("Returns policy", "Damaged goods"),
    ]
    assert passages[0].text.startswith("Opened electronics can be returned within 14 days.")
    assert "Keep the receipt." in passages[0].text
    assert "within 48 hours." in passages[1].text


def test_html_without_text_fails() -> None:
    with pytest.raises(ExtractionFailed, match="holds no text"):
        read_html(b"<html><body><nav>menu</nav><script>x()</script></body></html>")


def test_nesting_is_read_to_the_parser_depth_and_refused_beyond_it() -> None:
    def page(depth: int) -> bytes:
        inner = b"<div>" * depth + b"<p>deep words.</p>" + b"</div>" * depth
        return b"<html><body>" + inner + b"</body></html>"

    assert "deep words." in read_html(page(200)).text
    with pytest.raises(ExtractionFailed, match="deeper than 256 levels"):
        read_html(page(5000))


@pytest.mark.parametrize(
    ("mime", "name", "kind"),
    [
        ("text/markdown", "policy.txt", "markdown"),
        ("application/octet-stream", "policy.md", "markdown"),
        ("text/plain", "a.md", "plain"),
        (PDF, "scan", "pdf"),
        ("", "terms.DOCX", "docx"),
        ("text/html", "x", "html"),
        ("application/octet-stream", "page.htm", "html"),
        ("text/csv", "table.md", None),
        ("application/json", "data.txt", None),
        ("image/png", "photo.png", None),
    ],
)
def test_prose_is_chosen_by_type_then_extension(mime: str, name: str, kind: str | None) -> None:
    assert prose_kind(mime, name) == kind


def test_a_prose_markdown_document_without_records_is_read_with_passages() -> None:
    reading = read(RETURNS_MD, "text/markdown", "returns.md", LIMITS)
    assert isinstance(reading.found, Extraction)
    assert reading.found.candidates == []
    assert [p.heading_path for p in reading.passages] == [
        ("Returns policy",),
        ("Returns policy", "Damaged goods"),
    ]


def test_a_markdown_document_with_neither_records_nor_passages_still_fails() -> None:
    with pytest.raises(ExtractionFailed, match="no records found by the markdown extractor"):
        read(b"# Only a heading\n", "text/markdown", "empty.md", LIMITS)


def test_structured_documents_have_no_passages() -> None:
    reading = read(b"id,name\nc1,Acme\n", "text/csv", "c.csv", LIMITS)
    assert reading.passages == []
    assert isinstance(reading.found, Extraction) and len(reading.found.candidates) == 1


def test_a_word_document_gives_passages_and_its_key_value_records() -> None:
    content = docx_bytes([("Heading 1", "Supplier"), ("Normal", "Name: Acme\nCity: Paris")])
    reading = read(content, DOCX, "supplier.docx", LIMITS)
    assert isinstance(reading.found, Extraction)
    assert reading.found.extractor == "docx"
    assert reading.found.candidates[0].attributes == {"Name": "Acme", "City": "Paris"}
    assert reading.passages[0].heading_path == ("Supplier",)


def test_a_scanned_pdf_fails_the_document_with_its_reason() -> None:
    with pytest.raises(ExtractionFailed, match="no text layer"):
        read(blank_pdf(), PDF, "scan.pdf", LIMITS)


def test_with_the_model_on_a_page_without_rows_is_deferred_with_its_passages() -> None:
    reading = read(PAGE, "text/html", "returns.html", LIMITS, defer=True)
    assert isinstance(reading.found, Unstructured)
    assert reading.found.text.startswith("Returns policy")
    assert "track" not in reading.found.text
    assert len(reading.passages) == 2


def test_text_a_reader_produced_is_made_storable() -> None:
    assert storable("caf\udce9\x00 ok") == "caf\ufffd ok"
    assert storable("Rücksendung 返品") == "Rücksendung 返品"


def test_too_many_passages_leave_the_records_and_fail_a_document_without_any() -> None:
    tiny = Budget(max_pieces=8, overlap_pieces=0, max_passages=2)
    rows = b"Name: Acme\nCity: Paris\n\nSome prose here.\n\nMore prose.\n\nAnd more.\n"
    reading = read(rows, "text/plain", "notes.txt", LIMITS, budget=tiny)
    assert reading.passages == []
    assert isinstance(reading.found, Extraction) and len(reading.found.candidates) == 1
    prose = b"One paragraph.\n\nTwo paragraph.\n\nThree paragraph.\n"
    with pytest.raises(ExtractionFailed, match="more than 2 passages"):
        read(prose, "text/markdown", "notes.md", LIMITS, budget=tiny)
