"""Built-in extractors (no network), chosen by MIME type and then by file extension."""

from __future__ import annotations

from collections.abc import Callable

from engram_extraction.domain.candidates import Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors.keyvalue import extract_key_values
from engram_extraction.domain.extractors.markdown import extract_markdown_tables
from engram_extraction.domain.extractors.structured import extract_json, extract_ndjson
from engram_extraction.domain.extractors.tabular import extract_csv, extract_tsv

Extractor = Callable[[str, Limits], Extraction]

BY_MIME: dict[str, Extractor] = {
    "text/csv": extract_csv,
    "text/tab-separated-values": extract_tsv,
    "application/json": extract_json,
    "application/x-ndjson": extract_ndjson,
    "text/markdown": extract_markdown_tables,
    "text/plain": extract_key_values,
}
BY_EXTENSION: dict[str, Extractor] = {
    "csv": extract_csv,
    "tsv": extract_tsv,
    "json": extract_json,
    "ndjson": extract_ndjson,
    "jsonl": extract_ndjson,
    "md": extract_markdown_tables,
    "markdown": extract_markdown_tables,
    "txt": extract_key_values,
}


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


def choose(mime: str, file_name: str) -> Extractor:
    """The extractor for a document: its declared MIME type first, then its extension."""
    if mime in BY_MIME:
        return BY_MIME[mime]
    extension = file_name.rsplit(".", 1)[-1].lower() if "." in file_name else ""
    if extension in BY_EXTENSION:
        return BY_EXTENSION[extension]
    raise ExtractionFailed(f"no extractor for MIME type {mime!r}")


def extract(content: bytes, mime: str, file_name: str, limits: Limits) -> Extraction:
    """Decode and extract; raises ExtractionFailed when no row can be read at all."""
    extractor = choose(mime, file_name)
    extraction = extractor(decode_text(content), limits)
    if not extraction.candidates:
        raise ExtractionFailed(f"no records found by the {extraction.extractor} extractor")
    if len(extraction.candidates) > limits.max_records:
        raise ExtractionFailed(
            f"{len(extraction.candidates)} rows exceed the limit of {limits.max_records} per document"
        )
    return extraction
