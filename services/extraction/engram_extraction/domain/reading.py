"""A document version read two ways: its records (the built-in extractors, or the model) and,
for prose (Markdown, plain text, PDF, Word, HTML), its passages. A prose document with passages
but no records is read, not failed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engram_events.mimes import mismatch
from engram_extraction.domain.candidates import Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors import Unstructured, decode_text, extract_layout_text
from engram_extraction.domain.extractors import read as read_records
from engram_extraction.domain.formats import (
    DOCX,
    HTML,
    PDF,
    XHTML,
    FormatLimits,
    read_docx,
    read_html,
    read_pdf,
)
from engram_extraction.domain.layouts import markdown_layout, plain_layout
from engram_extraction.domain.passages import Budget, Layout, Passage, TooManyPassages, split

BinaryReader = Callable[[bytes, FormatLimits], Layout]
TEXT_LAYOUTS: dict[str, Callable[[str], Layout]] = {
    "markdown": markdown_layout,
    "plain": plain_layout,
}
BINARY_READERS: dict[str, BinaryReader] = {"pdf": read_pdf, "docx": read_docx, "html": read_html}
READ_AS = {"pdf": PDF, "docx": DOCX}
"""The type a reader checks the bytes against when it was chosen by the file's extension."""
PROSE_BY_MIME = {
    "text/markdown": "markdown",
    "text/plain": "plain",
    PDF: "pdf",
    DOCX: "docx",
    HTML: "html",
    XHTML: "html",
}
PROSE_BY_EXTENSION = {
    "md": "markdown",
    "markdown": "markdown",
    "txt": "plain",
    "pdf": "pdf",
    "docx": "docx",
    "html": "html",
    "htm": "html",
}
STRUCTURED_MIMES = frozenset(
    {"text/csv", "text/tab-separated-values", "application/json", "application/x-ndjson"}
)


@dataclass(frozen=True)
class Reading:
    """What a document version holds: records (or text for the model) and passages."""

    found: Extraction | Unstructured
    passages: list[Passage] = field(default_factory=list)


def prose_kind(mime: str, file_name: str) -> str | None:
    """Which prose reader a document takes: by its type, then by its extension; structured types
    (CSV, TSV, JSON, NDJSON) have no passages whatever their name says."""
    if mime in PROSE_BY_MIME:
        return PROSE_BY_MIME[mime]
    if mime in STRUCTURED_MIMES:
        return None
    extension = file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""
    return PROSE_BY_EXTENSION.get(extension)


def read(
    content: bytes,
    mime: str,
    file_name: str,
    limits: Limits,
    *,
    budget: Budget | None = None,
    formats: FormatLimits | None = None,
    defer: bool = False,
) -> Reading:
    """Records and passages; ExtractionFailed when the document is empty, is another kind of
    file than it was sent as (the reason says which), cannot be read or holds neither.
    With `defer`, text in which no built-in extractor or reader found rows (a PDF's, Word
    file's or page's laid-out text included) is handed back for the model."""
    kind = prose_kind(mime, file_name)
    if not content.strip():
        raise ExtractionFailed("the document is empty")
    wrong = mismatch(content, READ_AS.get(kind or "", mime))
    if wrong is not None:
        raise ExtractionFailed(wrong)
    reader = BINARY_READERS.get(kind or "")
    if reader is not None:
        layout = reader(content, formats or FormatLimits())
        passages, too_many = _passages(layout, budget)
        extraction = extract_layout_text(layout.text, kind or "", limits)
        if defer and not extraction.candidates:
            why = f"no rows found by the {kind} reader"
            return Reading(Unstructured(layout.text, why), passages)
        if not extraction.candidates and not passages:
            raise ExtractionFailed(too_many or f"no records found by the {kind} reader")
        return Reading(extraction, passages)
    passages, too_many = [], None
    if kind is not None:
        passages, too_many = _passages(TEXT_LAYOUTS[kind](decode_text(content)), budget)
    try:
        found = read_records(
            content, mime, file_name, limits, fallback=defer, allow_empty=bool(passages)
        )
    except ExtractionFailed:
        if too_many is None:
            raise
        raise ExtractionFailed(too_many) from None
    return Reading(found, passages)


def _passages(layout: Layout, budget: Budget | None) -> tuple[list[Passage], str | None]:
    """The layout's passages, or none and why when there are more than a document may hold
    (its records, if any, are still read)."""
    try:
        return split(layout, budget), None
    except TooManyPassages as exc:
        return [], str(exc)
