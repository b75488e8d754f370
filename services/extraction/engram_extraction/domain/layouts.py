"""The structure of text documents: Markdown's headings, paragraphs and list items, and plain
text's paragraphs and list items, as blocks whose spans index the document's own text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from engram_extraction.domain.passages import Block, BlockKind, Layout

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)?")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line's offset and content without its line ending (CRLF, LF or CR)."""
    for match in _LINE.finditer(text):
        if match.start() == len(text):
            return
        yield match.start(), match.group().rstrip("\r\n")


class _Builder:
    """Collects blocks; an open paragraph or item grows line by line until something ends it."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.open: tuple[BlockKind, int, int, int] | None = None

    def extend(self, kind: BlockKind, offset: int, line: str) -> None:
        start = offset + len(line) - len(line.lstrip())
        end = offset + len(line.rstrip())
        if self.open is not None and kind == "paragraph":
            open_kind, open_start, open_end, lines = self.open
            self.open = (open_kind, open_start, end if line.strip() else open_end, lines + 1)
        else:
            self.close()
            self.open = (kind, start, end, 1)

    def close(self) -> None:
        if self.open is not None:
            kind, start, end, _ = self.open
            self.blocks.append(Block(start, end, kind))
            self.open = None

    def heading(self, start: int, end: int, level: int) -> None:
        self.close()
        self.blocks.append(Block(start, end, "heading", level))


def markdown_layout(text: str) -> Layout:
    """ATX and setext headings, paragraphs, list items (with their continuation lines), fenced
    code kept whole; thematic breaks end a paragraph."""
    built = _Builder()
    fence: str | None = None
    for offset, line in _lines(text):
        if fence is not None:
            built.extend("paragraph", offset, line)
            if line.strip().startswith(fence):
                fence = None
                built.close()
            continue
        if opened := _FENCE.match(line):
            built.close()
            fence = opened.group(1)
            built.extend("paragraph", offset, line)
            continue
        if not line.strip():
            built.close()
            continue
        if atx := _ATX.match(line):
            title = atx.group(2) or ""
            start = offset + (atx.start(2) if atx.group(2) else len(line))
            built.heading(start, start + len(title), len(atx.group(1)))
            continue
        setext = _SETEXT.match(line)
        if setext and built.open is not None and built.open[0] == "paragraph":
            if built.open[3] == 1:
                _, start, end, _ = built.open
                built.open = None
                built.heading(start, end, 1 if setext.group(1)[0] == "=" else 2)
                continue
        if _BREAK.match(line):
            built.close()
            continue
        built.extend("item" if _ITEM.match(line) else "paragraph", offset, line)
    built.close()
    return Layout(text, tuple(built.blocks))


def plain_layout(text: str) -> Layout:
    """Paragraphs separated by blank lines, and list items; plain text has no headings."""
    built = _Builder()
    for offset, line in _lines(text):
        if not line.strip():
            built.close()
            continue
        built.extend("item" if _ITEM.match(line) else "paragraph", offset, line)
    built.close()
    return Layout(text, tuple(built.blocks))
