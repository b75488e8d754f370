"""The schema registry: declared record types with id, required and single-valued fields."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram_extraction.domain.naming import type_name

NAME = r"^[a-z][a-z0-9_]*$"


class ReferenceField(BaseModel):
    """A field naming another entity by its key: `{"field": "carrier_id", "to": "carrier",
    "predicate": "carried_by"}`; `many` splits the value on `separator` into several targets."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: str = Field(min_length=1, max_length=200)
    to: str = Field(pattern=NAME, max_length=100)
    predicate: str = Field(pattern=NAME, max_length=100)
    many: bool = False
    separator: str = Field(default=";", min_length=1, max_length=3)


class RecordSchema(BaseModel):
    """One declared type: how its entity key is formed, what a valid row must carry and which
    fields reference other entities."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=NAME, max_length=100)
    id_fields: tuple[str, ...] = ()
    required_fields: tuple[str, ...] = ()
    single_valued: tuple[str, ...] = ()
    references: tuple[ReferenceField, ...] = Field(default=(), max_length=50)

    @model_validator(mode="after")
    def _references_are_distinct(self) -> RecordSchema:
        """One declaration per field, never an id field, and a list-valued one is not also
        declared single-valued."""
        fields = [r.field for r in self.references]
        repeated = sorted({f for f in fields if fields.count(f) > 1})
        if repeated:
            raise ValueError(f"reference field(s) declared twice: {', '.join(repeated)}")
        keyed = sorted(set(fields) & set(self.id_fields))
        if keyed:
            raise ValueError(f"id field(s) cannot be references: {', '.join(keyed)}")
        both = sorted({r.field for r in self.references if r.many} & set(self.single_valued))
        if both:
            raise ValueError(f"list-valued reference(s) declared single-valued: {', '.join(both)}")
        return self


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
