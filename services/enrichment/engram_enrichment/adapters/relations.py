"""Enrichment's relations collection: one listing row per live relation fact (`_id`
tenant:relation id), indexed from both ends so a traversal either way is index-served.

A row keeps as plain fields only what walks filter, order and keep by (its ends, predicate,
relation id and status); the rest (type, attribute, value, support, periods) is one BSON value
(`adapters/packing`), read whole only for the relations a listing shows: the support list was
most of what the local server parsed per row, and a packed row cost it ~0.6x the time to insert
and ~0.65x to walk. Rows written before packing are read as they are.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal

from pymongo import ASCENDING, IndexModel, ReplaceOne

from engram_enrichment.adapters.packing import pack, unpack
from engram_enrichment.adapters.store import ENTITIES
from engram_platform.indexes import Indexes
from engram_platform.mongo import insert_new

RELATIONS = "relations"
INDEXES: Indexes = {
    RELATIONS: [
        IndexModel(
            [
                ("tenant_id", ASCENDING),
                ("subject_id", ASCENDING),
                ("predicate", ASCENDING),
                ("object_id", ASCENDING),
            ]
        ),
        IndexModel(
            [
                ("tenant_id", ASCENDING),
                ("object_id", ASCENDING),
                ("predicate", ASCENDING),
                ("subject_id", ASCENDING),
            ]
        ),
    ],
}
"""Out-edges by subject, in-edges by object, each optionally of one predicate."""
LOOKUP_CHUNK = 1000
OPEN_FIELDS = frozenset(
    {"_id", "tenant_id", "relation_id", "subject_id", "predicate", "object_id", "status"}
)
"""Stored as plain fields: what the indexes, walks and their order read."""
HIDDEN = {"_id": 0, "tenant_id": 0}


def unpack_row(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored row as one document again (a row stored before packing is returned as it is);
    rows are small, so their packed value is not compressed."""
    return unpack(doc, compressed=False)


def _projection(fields: Sequence[str] | None) -> dict[str, int]:
    """Only `fields` when all are open; otherwise the whole row but its key and tenant."""
    if fields and OPEN_FIELDS.issuperset(fields):
        return {"_id": 0, **dict.fromkeys(fields, 1)}
    return HIDDEN


def _shaped(row: dict[str, Any], fields: Sequence[str] | None) -> dict[str, Any]:
    """A row read with `_projection(fields)`, unpacked and cut to `fields` when named."""
    whole = unpack_row(row)
    if not fields or OPEN_FIELDS.issuperset(fields):
        return whole
    return {k: whole[k] for k in fields if k in whole}


class MongoRelationRows:
    """Rows are replaced by `_id`, so a replayed change writes the same row."""

    def __init__(self, db: Any) -> None:
        self.db = db

    async def put(self, tenant_id: str, rows: Sequence[dict[str, Any]]) -> None:
        """Write the rows: those not stored yet by one unordered insert, the others (and any a
        concurrent write stored first) by one unordered bulk of upserting replaces.

        An upsert of a new row cost the local server 8x an insert (1.0 ms against 0.12 ms a
        row, 1,000 rows; `bench/graph.py`), and an import's rows are nearly all new."""
        if not rows:
            return
        docs = {
            f"{tenant_id}:{row['relation_id']}": pack(
                {**row, "_id": f"{tenant_id}:{row['relation_id']}", "tenant_id": tenant_id},
                OPEN_FIELDS,
                compress=False,
            )
            for row in rows
        }
        stored: set[str] = set()
        ids = list(docs)
        for start in range(0, len(ids), LOOKUP_CHUNK):
            query = {"_id": {"$in": ids[start : start + LOOKUP_CHUNK]}, "tenant_id": tenant_id}
            found = self.db[RELATIONS].find(query, {"_id": 0, "relation_id": 1})
            stored |= {f"{tenant_id}:{d['relation_id']}" async for d in found}
        new = [doc for key, doc in docs.items() if key not in stored]
        raced = await insert_new(self.db[RELATIONS], new)
        replace = [doc for key, doc in docs.items() if key in stored]
        replace += [new[index] for index in sorted(raced)]
        if replace:
            await self.db[RELATIONS].bulk_write(
                [
                    ReplaceOne({"_id": doc["_id"], "tenant_id": tenant_id}, doc, upsert=True)
                    for doc in replace
                ],
                ordered=False,
            )

    async def remove(self, tenant_id: str, relation_ids: Sequence[str]) -> None:
        """Delete the rows; unknown ids are ignored."""
        if relation_ids:
            ids = [f"{tenant_id}:{relation_id}" for relation_id in relation_ids]
            await self.db[RELATIONS].delete_many({"_id": {"$in": ids}, "tenant_id": tenant_id})

    async def touching(
        self,
        tenant_id: str,
        node_ids: Sequence[str],
        end: Literal["subject", "object"],
        predicate: str | None,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Rows whose subject (or object) is one of the nodes, of one predicate when named;
        only `fields` of each when named (a walk reads its ends, predicate and status, and the
        whole row of only the edges it shows: `by_id`)."""
        if not node_ids:
            return []
        query: dict[str, Any] = {"tenant_id": tenant_id, f"{end}_id": {"$in": list(node_ids)}}
        if predicate:
            query["predicate"] = predicate
        cursor = self.db[RELATIONS].find(query, _projection(fields)).limit(limit)
        return [_shaped(row, fields) async for row in cursor]

    async def in_order(
        self,
        tenant_id: str,
        node_ids: Sequence[str],
        end: Literal["subject", "object"],
        predicate: str | None,
        start: tuple[str, str | None] | None,
        limit: int,
        fields: Sequence[str] | None,
        skip: Collection[str] = (),
    ) -> list[dict[str, Any]]:
        """Rows whose subject (or object) is one of the nodes, in (predicate, other end) order
        from `start` on, none of `skip` (see the port), at most `limit`: the end's index serves
        the filter and the order, so the server stops reading at the limit; the rows skipped
        are left out by the server, so they do not count toward it."""
        if not node_ids:
            return []
        other = "object_id" if end == "subject" else "subject_id"
        query: dict[str, Any] = {"tenant_id": tenant_id, f"{end}_id": {"$in": list(node_ids)}}
        if predicate:
            query["predicate"] = predicate
        if skip:
            query["relation_id"] = {"$nin": list(skip)}
        bound = after_bound(start, other)
        filter_ = {"$and": [query, bound]} if bound else query
        order = [("predicate", ASCENDING), (other, ASCENDING)]
        cursor = self.db[RELATIONS].find(filter_, _projection(fields)).sort(order).limit(limit)
        return [_shaped(row, fields) async for row in cursor]

    async def by_id(self, tenant_id: str, relation_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The whole rows of these relations (unknown ids are left out), by `_id`."""
        keys = [f"{tenant_id}:{relation_id}" for relation_id in dict.fromkeys(relation_ids)]
        found: list[dict[str, Any]] = []
        for start in range(0, len(keys), LOOKUP_CHUNK):
            query = {"_id": {"$in": keys[start : start + LOOKUP_CHUNK]}, "tenant_id": tenant_id}
            found += [unpack_row(row) async for row in self.db[RELATIONS].find(query, HIDDEN)]
        return found

    async def present(self, tenant_id: str, entity_ids: Sequence[str]) -> set[str]:
        """Of these entities, those stored with at least one live fact."""
        keys = [f"{tenant_id}:{entity_id}" for entity_id in dict.fromkeys(entity_ids)]
        found: set[str] = set()
        for start in range(0, len(keys), LOOKUP_CHUNK):
            query = {"_id": {"$in": keys[start : start + LOOKUP_CHUNK]}, "tenant_id": tenant_id}
            async for doc in self.db[ENTITIES].find(query, {"entity_id": 1, "fact_count": 1}):
                if doc.get("fact_count", 0) > 0:
                    found.add(str(doc["entity_id"]))
        return found


def after_bound(start: tuple[str, str | None] | None, other: str) -> dict[str, Any] | None:
    """The keyset condition of `in_order`'s start: (predicate, other end) at or after it, or
    the predicates after its predicate."""
    if start is None:
        return None
    predicate, far = start
    if far is None:
        return {"predicate": {"$gt": predicate}}
    return {
        "$or": [{"predicate": {"$gt": predicate}}, {"predicate": predicate, other: {"$gte": far}}]
    }
