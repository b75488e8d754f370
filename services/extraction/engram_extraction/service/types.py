"""Record types per tenant: the bundled file's types, replaced by name by what the tenant
declares through the API (versioned; a retired declaration lets the bundled one apply again).

Extraction reads the tenant's current declarations once per document or import (one indexed
query), so a change applies to every source extracted after it, on every instance, with no
cache to invalidate; what a record was built with is kept on it (`Declared`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.domain.types import TypeVersion, current, definition_of
from engram_extraction.ports import TypeStorage

log = logging.getLogger(__name__)


class TypeConflict(RuntimeError):
    """Another change of the same type won the race; the caller may retry."""


class RecordTypes:
    """Resolves, lists and changes a tenant's record types."""

    def __init__(self, store: TypeStorage, bundled: SchemaRegistry) -> None:
        self.store = store
        self.bundled = bundled

    async def registry_for(self, tenant_id: str) -> SchemaRegistry:
        """The types a source of this tenant is extracted with now."""
        return self.bundled.overlaid(current(await self.store.heads(tenant_id)))

    def _bundled_view(self, name: str) -> dict[str, Any] | None:
        found = self.bundled.declaration(name)
        if found is None or found.schema.name != name:
            return None
        return {
            "name": name,
            "origin": "bundled",
            "version": found.version,
            "definition": found.schema.model_dump(mode="json"),
        }

    def _tenant_view(self, row: TypeVersion) -> dict[str, Any]:
        return {**row.view(), "origin": "tenant", "bundled": name_in(self.bundled, row.name)}

    async def listing(self, tenant_id: str) -> list[dict[str, Any]]:
        """Every type in force for the tenant, by name, each saying whose definition applies."""
        views: dict[str, dict[str, Any]] = {}
        for name in self.bundled.by_name:
            view = self._bundled_view(name)
            if view is not None:
                views[name] = view
        for head in await self.store.heads(tenant_id):
            if head.schema is not None:
                views[head.name] = self._tenant_view(head)
        return [views[name] for name in sorted(views)]

    async def get(
        self, tenant_id: str, name: str, version: int | None = None
    ) -> dict[str, Any] | None:
        """The type in force (the tenant's, else the bundled one), or one of the tenant's
        versions; None when there is no such type or version."""
        if version is not None:
            row = await self.store.version(tenant_id, name, version)
            return self._tenant_view(row) if row else None
        head = await self.store.head(tenant_id, name)
        if head is not None and head.schema is not None:
            return self._tenant_view(head)
        return self._bundled_view(name)

    async def versions(self, tenant_id: str, name: str) -> dict[str, Any] | None:
        """The tenant's versions of the type, oldest first, and the bundled definition."""
        rows = await self.store.versions(tenant_id, name)
        bundled = self._bundled_view(name)
        if not rows and bundled is None:
            return None
        return {
            "name": name,
            "versions": [self._tenant_view(r) for r in rows],
            "bundled": bundled,
        }

    async def declare(
        self, tenant_id: str, name: str, body: Any, key_id: str | None
    ) -> dict[str, Any]:
        """The body becomes the type's next version (`BadDefinition` names what is wrong)."""
        schema = definition_of(name, body)
        head = await self.store.head(tenant_id, name)
        row = TypeVersion(
            name=name,
            version=(head.version if head else 0) + 1,
            schema=schema,
            at=datetime.now(UTC),
            key_id=key_id,
        )
        if not await self.store.change(tenant_id, row):
            raise TypeConflict(name)
        log.info(
            "record type declared",
            extra={"tenant_id": tenant_id, "record_type": name, "version": row.version},
        )
        return self._tenant_view(row)

    async def retire(self, tenant_id: str, name: str, key_id: str | None) -> dict[str, Any] | None:
        """The tenant's declaration stops applying (a new version without a definition), so
        the bundled one, if any, applies again; None when the tenant declares no such type."""
        head = await self.store.head(tenant_id, name)
        if head is None or head.schema is None:
            return None
        row = TypeVersion(
            name=name, version=head.version + 1, schema=None, at=datetime.now(UTC), key_id=key_id
        )
        if not await self.store.change(tenant_id, row):
            raise TypeConflict(name)
        log.info(
            "record type retired",
            extra={"tenant_id": tenant_id, "record_type": name, "version": row.version},
        )
        return {**self._tenant_view(row), "now": self._bundled_view(name)}


def name_in(registry: SchemaRegistry, name: str) -> bool:
    """Whether the bundled file declares this exact name."""
    return name in registry.by_name
