"""CSV and TSV: the first row names the columns; each later row is one candidate."""

from __future__ import annotations

import csv
import io

from engram_events.ids import Scalar
from engram_extraction.domain.candidates import (
    Candidate,
    Extraction,
    ExtractionFailed,
    Limits,
    check_values,
)

csv.field_size_limit(16 * 1024 * 1024)


def header_names(raw: list[str]) -> list[str]:
    """Trimmed, non-empty, unique column names (`name`, `name_2`, `column_3`)."""
    names: list[str] = []
    seen: set[str] = set()
    for index, cell in enumerate(raw, start=1):
        base = cell.strip() or f"column_{index}"
        name, n = base, 2
        while name in seen:
            name, n = f"{base}_{n}", n + 1
        seen.add(name)
        names.append(name)
    return names


def rows_to_candidates(
    header: list[str], rows: list[tuple[int, list[str]]], limits: Limits, locator: str = "row {n}"
) -> list[Candidate]:
    """Pair each row with the header; empty cells are absent attributes."""
    candidates: list[Candidate] = []
    width = len(header)
    for number, row in rows:
        where = locator.format(n=number)
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > width:
            candidates.append(
                Candidate(where, problem=f"row has {len(row)} fields, the header has {width}")
            )
            continue
        attributes: dict[str, Scalar] = {
            header[i]: cell.strip() for i, cell in enumerate(row) if cell.strip()
        }
        candidates.append(check_values(Candidate(where, attributes), limits))
    return candidates


def _extract_delimited(text: str, delimiter: str, name: str, limits: Limits) -> Extraction:
    """Shared CSV/TSV reading with a column limit checked before any row is built."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        first = next(reader, None)
        if first is None:
            raise ExtractionFailed("the document has no header row")
        if len(first) > limits.max_columns:
            raise ExtractionFailed(
                f"the header has {len(first)} columns; the limit is {limits.max_columns}"
            )
        header = header_names(first)
        rows = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:
        raise ExtractionFailed(f"unreadable {name}: {exc}") from None
    return Extraction(name, rows_to_candidates(header, rows, limits))


def extract_csv(text: str, limits: Limits) -> Extraction:
    """Comma-separated values with a header row."""
    return _extract_delimited(text, ",", "csv", limits)


def extract_tsv(text: str, limits: Limits) -> Extraction:
    """Tab-separated values with a header row."""
    return _extract_delimited(text, "\t", "tsv", limits)
