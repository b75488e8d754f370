"""Printing results (human or --json), one-line errors, and a plain progress bar on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from pydantic import BaseModel


def plain(value: Any) -> Any:
    """Models and lists of models as JSON-ready data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=False)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def emit(value: Any, as_json: bool, human: Callable[[Any], str] | None = None) -> None:
    """Print a result: JSON when asked (or when there is no human form), else the human form."""
    if as_json or human is None:
        print(json.dumps(plain(value), indent=2, sort_keys=True, default=str))
    else:
        text = human(value)
        if text:
            print(text)


def fail(message: str, hint: str = "") -> None:
    """One line on stderr: what went wrong and what to do."""
    line = f"engram: error: {message}"
    if hint:
        line += f" ({hint})"
    print(line, file=sys.stderr)


def note(message: str) -> None:
    """A status line on stderr, so stdout stays parseable."""
    print(f"engram: {message}", file=sys.stderr)


class ProgressBar:
    """`\\r`-redrawn bar on a terminal; silent when stderr is not one (logs stay clean)."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, width: int = 30):
        self.total = max(total, 1)
        self.label = label
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = self.stream.isatty()
        self.done = 0

    def advance(self, caption: str = "") -> None:
        """Count one more item and redraw."""
        self.done += 1
        self.draw(caption)

    def draw(self, caption: str = "") -> None:
        """Redraw the bar in place."""
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        text = f"\r{self.label} [{bar}] {self.done}/{self.total} {caption[:40]:<40}"
        self.stream.write(text)
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


class StatusLine:
    """A single `\\r`-redrawn status line on a terminal (for --wait / --follow)."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.used = False

    def show(self, text: str) -> None:
        """Replace the line's text."""
        if self.enabled:
            self.stream.write(f"\r{text[:100]:<100}")
            self.stream.flush()
            self.used = True

    def close(self) -> None:
        """End the line if anything was drawn."""
        if self.used:
            self.stream.write("\n")
            self.stream.flush()
