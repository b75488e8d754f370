"""Markdown: pipe tables (a header row, a `---` separator row, then data rows), and `key: value`
blocks in the text around them, read as in plain text (list markers and bold keys allowed)."""

from __future__ import annotations

import re

from engram_extraction.domain.candidates import Candidate, Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors.keyvalue import extract_key_values
from engram_extraction.domain.extractors.tabular import header_names, rows_to_candidates

_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_BOLD_KEY = re.compile(r"^(\*\*|__)([^*_:]+?)\1\s*:|^(\*\*|__)([^*_:]+?):\3")


def _cells(line: str) -> list[str]:
    """Cells of one pipe row, honouring `\\|` escapes."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [cell.replace("\\|", "|").strip() for cell in re.split(r"(?<!\\)\|", body)]


def extract_markdown(text: str, limits: Limits) -> Extraction:
    """The document's tables, then its `key: value` blocks outside them."""
    tables, rest = _tables(text, limits)
    blocks = extract_key_values("\n".join(_plain_pair(line) for line in rest), limits)
    return Extraction("markdown", [*tables, *blocks.candidates])


def _plain_pair(line: str) -> str:
    """`- **Name**: Acme` as `Name: Acme`, so a Markdown list of fields reads as plain text."""
    line = _LIST_ITEM.sub("", line, count=1)
    return _BOLD_KEY.sub(lambda m: f"{m.group(2) or m.group(4)}:", line, count=1)


def _tables(text: str, limits: Limits) -> tuple[list[Candidate], list[str]]:
    """Every table's rows (the locator names the table and the line), and the document's lines
    with the tables blanked out."""
    lines = text.splitlines()
    rest = list(lines)
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
            start = i
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append((i + 1, _cells(lines[i])))
                i += 1
            rest[start:i] = [""] * (i - start)
            locator = f"table {table} line {{n}}"
            candidates.extend(rows_to_candidates(header, rows, limits, locator))
        else:
            i += 1
    return candidates, rest
