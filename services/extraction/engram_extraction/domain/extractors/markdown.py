"""Markdown pipe tables: a header row, a `---` separator row, then data rows."""

from __future__ import annotations

import re

from engram_extraction.domain.candidates import Candidate, Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors.tabular import header_names, rows_to_candidates

_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _cells(line: str) -> list[str]:
    """Cells of one pipe row, honouring `\\|` escapes."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [cell.replace("\\|", "|").strip() for cell in re.split(r"(?<!\\)\|", body)]


def extract_markdown_tables(text: str, limits: Limits) -> Extraction:
    """Every table in the document; the locator names the table and the line."""
    lines = text.splitlines()
    candidates: list[Candidate] = []
    table = 0
    i = 0
    while i + 1 < len(lines):
        if "|" in lines[i] and _SEPARATOR.match(lines[i + 1].strip()):
            table += 1
            raw_header = _cells(lines[i])
            if len(raw_header) > limits.max_columns:
                raise ExtractionFailed(
                    f"table {table} has {len(raw_header)} columns; the limit is {limits.max_columns}"
                )
            header = header_names(raw_header)
            rows: list[tuple[int, list[str]]] = []
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append((i + 1, _cells(lines[i])))
                i += 1
            locator = f"table {table} line {{n}}"
            candidates.extend(rows_to_candidates(header, rows, limits, locator))
        else:
            i += 1
    return Extraction("markdown_table", candidates)
