"""A tenant's record type definitions: one head per (tenant, type) naming its current version,
and one row per version kept as history.

A change replaces the head only if it still holds the version the change was based on (insert
for a first version), so of two instances changing one type at once exactly one wins; the
version row is written after, and a version whose row a crash left unwritten is read from the
head.
"""

from __future__ import annotations

from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from engram_extraction.domain.schema import RecordSchema
from engram_extraction.domain.types import TypeVersion
from engram_platform.indexes import Indexes

TYPE_HEADS = "record_type_heads"
TYPE_VERSIONS = "record_type_versions"
INDEXES: Indexes = {
    TYPE_HEADS: [IndexModel([("tenant_id", ASCENDING), ("name", ASCENDING)])],
    TYPE_VERSIONS: [
        IndexModel([("tenant_id", ASCENDING), ("name", ASCENDING), ("position", ASCENDING)])
    ],
}
"""A tenant's current types by name (read on every extraction), and one type's versions in
order (`position`, the version as a zero-padded string, which the local server's index sorts)."""


def _position(version: int) -> str:
    return f"{version:09d}"


def _doc(tenant_id: str, row: TypeVersion) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "name": row.name,
        "version": row.version,
        "position": _position(row.version),
        "definition": row.schema.model_dump(mode="json") if row.schema else None,
        "at": row.at,
        "key_id": row.key_id,
    }


def _row(doc: dict[str, Any]) -> TypeVersion:
    definition = doc.get("definition")
    return TypeVersion(
        name=doc["name"],
        version=int(doc["version"]),
        schema=RecordSchema.model_validate(definition) if definition is not None else None,
        at=doc["at"],
        key_id=doc.get("key_id"),
    )


class TypeStore:
    """Every key starts with the tenant, and every query carries the tenant predicate."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def heads(self, tenant_id: str) -> list[TypeVersion]:
        """Every type the tenant declared, retired ones included, by name."""
        cursor = self.db[TYPE_HEADS].find({"tenant_id": tenant_id}).sort("name", ASCENDING)
        return [_row(doc) async for doc in cursor]

    async def head(self, tenant_id: str, name: str) -> TypeVersion | None:
        """The type's current version, if the tenant ever declared it."""
        doc = await self.db[TYPE_HEADS].find_one(
            {"_id": f"{tenant_id}:{name}", "tenant_id": tenant_id}
        )
        return _row(doc) if doc else None

    async def version(self, tenant_id: str, name: str, version: int) -> TypeVersion | None:
        """One version of the type (the head when its row is not written yet)."""
        doc = await self.db[TYPE_VERSIONS].find_one(
            {"_id": f"{tenant_id}:{name}:{_position(version)}", "tenant_id": tenant_id}
        )
        if doc is not None:
            return _row(doc)
        head = await self.head(tenant_id, name)
        return head if head is not None and head.version == version else None

    async def versions(self, tenant_id: str, name: str) -> list[TypeVersion]:
        """Every version of the type, oldest first."""
        cursor = (
            self.db[TYPE_VERSIONS]
            .find({"tenant_id": tenant_id, "name": name})
            .sort("position", ASCENDING)
        )
        found = [_row(doc) async for doc in cursor]
        head = await self.head(tenant_id, name)
        if head is not None and (not found or found[-1].version < head.version):
            found.append(head)
        return found

    async def change(self, tenant_id: str, row: TypeVersion) -> bool:
        """Make `row` the type's current version if the head still holds the one before it;
        False when another change got there first."""
        head_id = f"{tenant_id}:{row.name}"
        doc = _doc(tenant_id, row)
        if row.version == 1:
            try:
                await self.db[TYPE_HEADS].insert_one({"_id": head_id, **doc})
            except DuplicateKeyError:
                return False
        else:
            done = await self.db[TYPE_HEADS].replace_one(
                {"_id": head_id, "tenant_id": tenant_id, "version": row.version - 1}, doc
            )
            if done.matched_count == 0:
                return False
        await self.db[TYPE_VERSIONS].replace_one(
            {"_id": f"{head_id}:{_position(row.version)}", "tenant_id": tenant_id},
            doc,
            upsert=True,
        )
        return True
