"""The schema registry: declared record types with id, required and single-valued fields."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from engram_extraction.domain.naming import type_name


class RecordSchema(BaseModel):
    """One declared type: how its entity key is formed and what a valid row must carry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=100)
    id_fields: tuple[str, ...] = ()
    required_fields: tuple[str, ...] = ()
    single_valued: tuple[str, ...] = ()


class SchemaFile(BaseModel):
    """The registry file's shape (JSON, or YAML when PyYAML is installed)."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    types: list[RecordSchema] = Field(default_factory=list)


class SchemaRegistry:
    """Record types by name; an undeclared type is keyed by `id` (or a source's key), else a hash."""

    def __init__(self, schemas: list[RecordSchema] | None = None) -> None:
        self.by_name = {s.name: s for s in schemas or []}

    def get(self, record_type: str) -> RecordSchema | None:
        """The declared schema for a type, if any."""
        return self.by_name.get(type_name(record_type))

    @classmethod
    def load(cls, path: Path) -> SchemaRegistry:
        """Read and validate the registry file; a broken file stops start-up, loudly."""
        text = path.read_text(encoding="utf-8")
        if path.suffix in {".yaml", ".yml"}:
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
        return cls(SchemaFile.model_validate(data).types)
