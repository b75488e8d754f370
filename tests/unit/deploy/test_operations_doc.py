"""docs/operations.md cites benchmarks that exist and sections of performance.md that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "docs"
ROOT = DOCS.parent


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_cited_benchmarks_and_sections_exist() -> None:
    operations = (DOCS / "operations.md").read_text()
    performance = (DOCS / "performance.md").read_text()
    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", performance, re.M)}
    cited = set(re.findall(r"\(performance\.md#([^)]+)\)", operations))
    assert cited, "the capacity table cites performance.md sections"
    assert cited <= anchors, f"no such section in performance.md: {sorted(cited - anchors)}"
    for script in set(re.findall(r"`(bench/\w+\.py)`", operations)):
        assert (ROOT / script).is_file(), script


def test_readme_links_the_operations_guide() -> None:
    assert "(docs/operations.md)" in (ROOT / "README.md").read_text()
