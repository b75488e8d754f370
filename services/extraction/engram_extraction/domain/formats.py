"""Binary and marked-up documents as laid-out text: PDF (pages kept), Word (headings by style),
HTML (main content, boilerplate dropped). Each reader is bounded and fails with a content-free
reason a user can act on."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from engram_extraction.domain.candidates import ExtractionFailed
from engram_extraction.domain.passages import Block, BlockKind, Layout

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
HTML = "text/html"
XHTML = "application/xhtml+xml"
_BLANK_LINES = re.compile(r"\n[ \t\f\v]*\n")
_SURROGATE = re.compile("[\ud800-\udfff]")
_HEADING_STYLE = re.compile(r"^heading (\d)$", re.IGNORECASE)
_RATIO_FROM = 1024 * 1024
_DROPPED = (
    "script",
    "style",
    "nav",
    "header",
    "footer",
    "aside",
    "noscript",
    "template",
    "form",
    "iframe",
    "svg",
    "button",
)
_HTML_BLOCKS = frozenset(
    {"p", "li", "pre", "blockquote", "dd", "dt", "td", "th", "figcaption", "caption", "div"}
    | {"section", "article", "main", "body", "ul", "ol", "table", "tr", "dl", "figure"}
    | {"h1", "h2", "h3", "h4", "h5", "h6"}
)


@dataclass(frozen=True)
class FormatLimits:
    """How much of a document a reader takes on before refusing it."""

    max_pages: int = 2000
    max_chars: int = 5_000_000
    max_unzipped_bytes: int = 100 * 1024 * 1024
    max_zip_entries: int = 2000
    max_xml_part_bytes: int = 20 * 1024 * 1024
    """Each XML part of a Word file is parsed whole: 20 MiB is ~400 MB of parse tree."""
    max_zip_ratio: int = 100
    """Word's XML packs 5 to 20 to 1; a part packed tighter than this (and over 1 MiB) is a
    zip bomb."""


def storable(text: str) -> str:
    """Text a reader produced as the contract can carry it: a lone surrogate (a broken font map
    can yield one) becomes U+FFFD, and NUL is dropped."""
    return _SURROGATE.sub("\ufffd", text).replace("\x00", "")


class _Text:
    """Extracted text built block by block (blank line between blocks), spans recorded."""

    def __init__(self, limits: FormatLimits) -> None:
        self.parts: list[str] = []
        self.blocks: list[Block] = []
        self.length = 0
        self.limits = limits

    def add(self, text: str, kind: BlockKind, level: int = 0, page: int | None = None) -> None:
        text = storable(text).strip()
        if not text:
            return
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        if self.length + len(text) > self.limits.max_chars:
            raise ExtractionFailed(
                f"the document's text exceeds the limit of {self.limits.max_chars} characters"
            )
        self.blocks.append(Block(self.length, self.length + len(text), kind, level, page))
        self.parts.append(text)
        self.length += len(text)

    def layout(self, what: str) -> Layout:
        if not self.blocks:
            raise ExtractionFailed(f"the {what} holds no text")
        return Layout("".join(self.parts), tuple(self.blocks))


def read_pdf(content: bytes, limits: FormatLimits | None = None) -> Layout:
    """Each page's text layer in layout mode (which keeps the vertical gaps between paragraphs as
    blank lines), split into paragraphs there; blocks carry their page
    (1-based). An encrypted PDF, or one without any text layer (a scan), fails with that reason."""
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PyPdfError

    limits = limits or FormatLimits()
    try:
        reader = PdfReader(io.BytesIO(content))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionFailed("the PDF is encrypted; upload it without a password")
        count = len(reader.pages)
        if count > limits.max_pages:
            raise ExtractionFailed(f"the PDF has {count} pages; the limit is {limits.max_pages}")
        out = _Text(limits)
        for number, page in enumerate(reader.pages, start=1):
            for paragraph in _BLANK_LINES.split(_page_text(page)):
                out.add(_join_lines(paragraph), "paragraph", page=number)
    except ExtractionFailed:
        raise
    except LimitReachedError:
        raise ExtractionFailed(
            "the PDF holds a stream that unpacks past the reader's limit (a decompression bomb)"
        ) from None
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise ExtractionFailed(f"the PDF cannot be read ({type(exc).__name__})") from None
    if not out.blocks:
        raise ExtractionFailed(
            "the PDF has no text layer (a scanned PDF needs OCR, which Engram does not do)"
        )
    return out.layout("PDF")


def _page_text(page: Any) -> str:
    """A page's text in layout mode, or in plain mode where layout mode cannot read the page
    (no fonts, as on a blank page)."""
    try:
        return str(page.extract_text(extraction_mode="layout") or "")
    except (KeyError, ValueError, TypeError, AttributeError):
        return str(page.extract_text() or "")


def _join_lines(paragraph: str) -> str:
    """A PDF paragraph's lines as running text; a word hyphenated across lines is rejoined."""
    lines = [" ".join(line.split()) for line in paragraph.splitlines() if line.strip()]
    joined = ""
    for line in lines:
        if joined.endswith("-") and line[:1].islower():
            joined = joined[:-1] + line
        else:
            joined = f"{joined} {line}" if joined else line
    return joined


def _check_zip(content: bytes, limits: FormatLimits) -> None:
    """A Word file is a zip: refuse one that unpacks too large, holds too many entries, packs
    a part too tightly or has an XML part too large to parse, from the sizes its directory
    declares (zipfile never inflates a part past its declared size: a part that lies fails its
    CRC check), before anything is inflated."""
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError):
        raise ExtractionFailed("the Word document is not a valid .docx (zip) file") from None
    if len(entries) > limits.max_zip_entries:
        raise ExtractionFailed(f"the Word document holds more than {limits.max_zip_entries} parts")
    if sum(entry.file_size for entry in entries) > limits.max_unzipped_bytes:
        raise ExtractionFailed(
            f"the Word document unpacks to more than {limits.max_unzipped_bytes} bytes"
        )
    for entry in entries:
        packed = max(entry.compress_size, 1)
        if entry.file_size > _RATIO_FROM and entry.file_size > limits.max_zip_ratio * packed:
            raise ExtractionFailed(
                f"the Word document is a zip bomb: a part unpacks to {entry.file_size // packed} "
                f"times its packed size (the limit is {limits.max_zip_ratio})"
            )
        xml = entry.filename.lower().endswith((".xml", ".rels"))
        if xml and entry.file_size > limits.max_xml_part_bytes:
            raise ExtractionFailed(
                f"the Word document has an XML part of more than {limits.max_xml_part_bytes} bytes"
            )


def read_docx(content: bytes, limits: FormatLimits | None = None) -> Layout:
    """Body paragraphs and table rows in order; `Heading N` styles are headings under the
    `Title` (the root of every path when there is one), list styles and numbered paragraphs
    are list items."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    limits = limits or FormatLimits()
    _check_zip(content, limits)
    try:
        document = docx.Document(io.BytesIO(content))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise ExtractionFailed(f"the Word document cannot be read ({type(exc).__name__})") from None
    out = _Text(limits)
    for kind, level, text in _docx_blocks(document):
        out.add(text, kind, level)
    return out.layout("Word document")


def _docx_blocks(document: Any) -> Iterator[tuple[BlockKind, int, str]]:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    style_name = _paragraph_styles(document)
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            for row in item.rows:
                cells = [" ".join(cell.text.split()) for cell in row.cells]
                yield "paragraph", 0, " | ".join(c for c in cells if c)
            continue
        assert isinstance(item, Paragraph)
        style = style_name(item._p.style)
        heading = _HEADING_STYLE.match(style)
        if heading or style.lower() == "title":
            yield "heading", int(heading.group(1)) if heading else 0, item.text
        elif style.lower().startswith("list") or _numbered(item):
            yield "item", 0, item.text
        else:
            yield "paragraph", 0, item.text


def _paragraph_styles(document: Any) -> Callable[[str | None], str]:
    """Paragraph style names by id, looked up once: python-docx scans every style for each
    paragraph's (a second per thousand paragraphs), so a long document took minutes."""
    from docx.enum.style import WD_STYLE_TYPE

    kind = WD_STYLE_TYPE.PARAGRAPH
    names = {s.style_id: s.name or "" for s in document.styles if s.type == kind}
    default = document.styles.default(kind)
    fallback = (default.name or "") if default is not None else ""
    return lambda style_id: names.get(style_id, fallback) if style_id else fallback


def _numbered(paragraph: Any) -> bool:
    """Whether a paragraph carries list numbering of its own (a list without a list style)."""
    properties = paragraph._p.pPr
    return properties is not None and properties.numPr is not None


def read_html(content: bytes, limits: FormatLimits | None = None) -> Layout:
    """The page's `main` (else its first `article`, else its body) without scripts, styles,
    navigation, headers, footers and asides; headings `h1`-`h6` kept, each innermost block one
    paragraph or list item."""
    from lxml import etree, html

    limits = limits or FormatLimits()
    if len(content) > limits.max_chars:
        raise ExtractionFailed(f"the page exceeds the limit of {limits.max_chars} bytes")
    parser = html.HTMLParser()
    try:
        root = html.document_fromstring(content, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise ExtractionFailed(f"the HTML page cannot be read ({type(exc).__name__})") from None
    if any(error.type_name == "ERR_RESOURCE_LIMIT" for error in parser.error_log):
        raise ExtractionFailed("the HTML page nests elements deeper than 256 levels")
    for dropped in root.xpath(" | ".join(f"//{tag}" for tag in _DROPPED)):
        dropped.drop_tree()
    found = root.xpath("//main") or root.xpath("//article") or root.xpath("//body") or [root]
    out = _Text(limits)
    for kind, level, text in _html_blocks(found[0]):
        out.add(text, kind, level)
    return out.layout("HTML page")


def _html_blocks(container: Any) -> Iterator[tuple[BlockKind, int, str]]:
    """Headings and innermost blocks in document order (a block holding blocks gives its own
    loose text as a paragraph of its own)."""
    for element in container.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag not in _HTML_BLOCKS:
            continue
        if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
            yield "heading", int(tag[1]), " ".join(element.text_content().split())
            continue
        if any(child.tag in _HTML_BLOCKS for child in element.iterdescendants()):
            loose = " ".join([element.text or "", *(c.tail or "" for c in element)]).split()
            if loose:
                yield "paragraph", 0, " ".join(loose)
            continue
        text = element.text_content()
        if tag == "pre":
            yield "paragraph", 0, text
        else:
            yield "item" if tag == "li" else "paragraph", 0, " ".join(text.split())
