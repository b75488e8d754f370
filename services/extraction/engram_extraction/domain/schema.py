"""The schema registry: declared record types with id, required and single-valued fields.

The bundled file declares the types every tenant starts with; a tenant's own declarations
(`domain.types`) replace them by name, version by version.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from engram_extraction.domain.naming import type_name


class RecordSchema(BaseModel):
    """One declared type: how its entity key is formed and what a valid row must carry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=100)
    id_fields: tuple[str, ...] = ()
    required_fields: tuple[str, ...] = ()
    single_valued: tuple[str, ...] | None = None
    """Exactly the attributes that hold one value (two live values contradict); absent, the
    enrichment service's own schema decides."""


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
