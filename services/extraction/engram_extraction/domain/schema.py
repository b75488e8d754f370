"""The schema registry: declared record types with id, required and single-valued fields.

The bundled file declares the types every tenant starts with; a tenant's own declarations
(`domain.types`) replace them by name, version by version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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
    single_valued: tuple[str, ...] | None = None
    """Exactly the attributes that hold one value (two live values contradict); absent, the
    enrichment service's own schema decides."""
    references: tuple[ReferenceField, ...] = Field(default=(), max_length=50)
    valid_from_field: str | None = Field(default=None, min_length=1, max_length=200)
    """The field holding the date (or date-time) from which a row's values are true, such as
    `effective_date`; absent, the record's time is."""
    valid_to_field: str | None = Field(default=None, min_length=1, max_length=200)
    """The field holding the date from which a row's values are no longer true (exclusive)."""

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
        declared = set(self.single_valued or ())
        both = sorted({r.field for r in self.references if r.many} & declared)
        if both:
            raise ValueError(f"list-valued reference(s) declared single-valued: {', '.join(both)}")
        return self

    @model_validator(mode="after")
    def _validity_fields_are_plain(self) -> RecordSchema:
        """A validity field is neither an id field, a reference, nor both ends at once."""
        named = [f for f in (self.valid_from_field, self.valid_to_field) if f is not None]
        if len(named) == 2 and named[0] == named[1]:
            raise ValueError("valid_from_field and valid_to_field must differ")
        keyed = sorted(set(named) & set(self.id_fields))
        if keyed:
            raise ValueError(f"id field(s) cannot be validity fields: {', '.join(keyed)}")
        referenced = sorted(set(named) & {r.field for r in self.references})
        if referenced:
            raise ValueError(f"reference(s) cannot be validity fields: {', '.join(referenced)}")
        return self


class SchemaFile(BaseModel):
    """The registry file's shape (JSON, or YAML when PyYAML is installed)."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    types: list[RecordSchema] = Field(default_factory=list)


Origin = Literal["bundled", "tenant"]


@dataclass(frozen=True)
class Declared:
    """Which definition of a type built a record: the bundled file's or the tenant's, and its
    version (the file's `version`, or the tenant's nth change)."""

    origin: Origin
    version: int
    schema: RecordSchema


class SchemaRegistry:
    """Record types by name; an undeclared type is keyed by `id` (or a source's key), else a hash."""

    def __init__(
        self,
        schemas: list[RecordSchema] | None = None,
        *,
        version: int = 1,
        origin: Origin = "bundled",
    ) -> None:
        self.declared = {s.name: Declared(origin, version, s) for s in schemas or []}
        self.by_name = {name: d.schema for name, d in self.declared.items()}

    def get(self, record_type: str) -> RecordSchema | None:
        """The declared schema for a type, if any."""
        return self.by_name.get(type_name(record_type))

    def declaration(self, record_type: str) -> Declared | None:
        """The declared schema for a type with where it came from, if any."""
        return self.declared.get(type_name(record_type))

    def overlaid(self, tenant: dict[str, tuple[int, RecordSchema]]) -> SchemaRegistry:
        """This registry with a tenant's current declarations (by name: version and schema)
        replacing the bundled ones; a type the tenant retired is not in `tenant`."""
        if not tenant:
            return self
        merged = SchemaRegistry()
        merged.declared = {
            **self.declared,
            **{name: Declared("tenant", v, schema) for name, (v, schema) in tenant.items()},
        }
        merged.by_name = {name: d.schema for name, d in merged.declared.items()}
        return merged

    @classmethod
    def load(cls, path: Path) -> SchemaRegistry:
        """Read and validate the registry file; a broken file stops start-up, loudly."""
        text = path.read_text(encoding="utf-8")
        if path.suffix in {".yaml", ".yml"}:
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
        parsed = SchemaFile.model_validate(data)
        return cls(parsed.types, version=parsed.version)
