"""Built-in extractors (no network), chosen by MIME type and then by file extension.

`extract_or_defer` (used when the optional LLM extractor is configured) hands text that no
built-in extractor can read back as `Unstructured` instead of failing: a document whose MIME
type and extension match no built-in extractor, or a prose-tolerant one (`key: value` text,
Markdown tables and fields) that found no rows in it. Content that is empty, binary or not UTF-8, and
structured formats that fail to parse or hold no rows, still fail: a model would only guess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engram_extraction.domain.candidates import Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors.keyvalue import extract_key_values
from engram_extraction.domain.extractors.markdown import extract_markdown
from engram_extraction.domain.extractors.structured import extract_json, extract_ndjson
from engram_extraction.domain.extractors.tabular import extract_csv, extract_tsv

Extractor = Callable[[str, Limits], Extraction]

BY_MIME: dict[str, Extractor] = {
    "text/csv": extract_csv,
    "text/tab-separated-values": extract_tsv,
    "application/json": extract_json,
    "application/x-ndjson": extract_ndjson,
    "text/markdown": extract_markdown,
    "text/plain": extract_key_values,
}
BY_EXTENSION: dict[str, Extractor] = {
    "csv": extract_csv,
    "tsv": extract_tsv,
    "json": extract_json,
    "ndjson": extract_ndjson,
    "jsonl": extract_ndjson,
    "md": extract_markdown,
    "markdown": extract_markdown,
    "txt": extract_key_values,
}
PROSE_TOLERANT = frozenset({"key_value", "markdown"})
"""Built-in extractors that read prose without failing, so finding no rows means unstructured."""


@dataclass(frozen=True)
class Unstructured:
    """Readable text no built-in extractor found rows in; `why` is content-free, for logs."""

    text: str
    why: str


def decode_text(content: bytes) -> str:
    """UTF-8 text without NUL bytes, or a permanent, content-free failure."""
    if not content.strip():
        raise ExtractionFailed("the document is empty")
    if b"\x00" in content:
        raise ExtractionFailed("the document contains NUL bytes (binary content)")
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExtractionFailed(
            f"the document is not valid UTF-8 (invalid byte at {exc.start})"
        ) from None
    return text.removeprefix("\ufeff")


def find(mime: str, file_name: str) -> Extractor | None:
    """The built-in extractor for a document: its MIME type first, then its extension."""
    if mime in BY_MIME:
        return BY_MIME[mime]
    extension = file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""
    return BY_EXTENSION.get(extension)


def bounded(extraction: Extraction, limits: Limits, *, allow_empty: bool = False) -> Extraction:
    """An extraction with at least one row (unless the document has passages instead) and no
    more than the per-document limit."""
    if not extraction.candidates and not allow_empty:
        raise ExtractionFailed(f"no records found by the {extraction.extractor} extractor")
    if len(extraction.candidates) > limits.max_records:
        raise ExtractionFailed(
            f"{len(extraction.candidates)} rows exceed the limit of {limits.max_records} per document"
        )
    return extraction


def extract(content: bytes, mime: str, file_name: str, limits: Limits) -> Extraction:
    """Decode and extract with a built-in extractor; ExtractionFailed when no row can be read."""
    found = read(content, mime, file_name, limits, fallback=False)
    assert isinstance(found, Extraction)
    return found


def extract_or_defer(
    content: bytes, mime: str, file_name: str, limits: Limits
) -> Extraction | Unstructured:
    """Like `extract`, but text no built-in extractor can read is deferred to the model."""
    return read(content, mime, file_name, limits, fallback=True)


def extract_layout_text(text: str, reader: str, limits: Limits) -> Extraction:
    """`key: value` blocks in the text a PDF, Word or HTML reader laid out, named after it
    (none is not a failure here: the caller weighs them with the passages)."""
    found = Extraction(reader, extract_key_values(text, limits).candidates)
    return bounded(found, limits, allow_empty=True)


def read(
    content: bytes,
    mime: str,
    file_name: str,
    limits: Limits,
    *,
    fallback: bool,
    allow_empty: bool = False,
) -> Extraction | Unstructured:
    """The built-in extractor's rows (none allowed when the document has passages), or, with
    `fallback`, text for the model."""
    extractor = find(mime, file_name)
    if extractor is None:
        if not fallback:
            raise ExtractionFailed(f"no extractor for MIME type {mime!r}")
        return Unstructured(decode_text(content), "no built-in extractor")
    text = decode_text(content)
    extraction = extractor(text, limits)
    if fallback and not extraction.candidates and extraction.extractor in PROSE_TOLERANT:
        return Unstructured(text, f"no rows found by the {extraction.extractor} extractor")
    return bounded(extraction, limits, allow_empty=allow_empty)
