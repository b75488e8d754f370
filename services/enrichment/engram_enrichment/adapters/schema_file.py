"""Loading the schema registry from its JSON file."""

from __future__ import annotations

import json
from pathlib import Path

from engram_enrichment.domain.schema import Schema


def load_schema(path: Path | None) -> Schema:
    """The registry in the file, or the default (all single-valued) when no file is configured."""
    if path is None:
        return Schema()
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the schema registry must be a JSON object")
    return Schema.from_json(data)
