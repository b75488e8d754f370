"""Memory rows in Mongo, keyed `tenant:memory_id`; every query carries the tenant predicate."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel, UpdateOne

from engram_events.memory_filter import MetadataCondition
from engram_memory.domain.expiry import EXPIRABLE_STATUSES, effective_status, status_clauses
from engram_memory.domain.listing import Order, Position
from engram_memory.domain.rows import MemoryRow
from engram_memory.domain.selection import Selection
from engram_memory.domain.writes import CONTENT_FIELDS
from engram_platform.held import held_ids
from engram_platform.indexes import Indexes
from engram_platform.mongo import as_stored, insert_new

MEMORIES = "memories"
GONE_SOURCES = "gone_sources"
SOURCES = "memory_sources"
"""Per source (record, fact, document): the memories derived from it, keyed `tenant:source`; kept
only where the server's indexes serve no equality on an array field (`derived_from`): the local
server (`ServerCapabilities.multikey_indexes`)."""
LOOKUP_CHUNK = 1000
INDEXES: Indexes = {
    MEMORIES: [
        IndexModel(
            [
                ("tenant_id", ASCENDING),
                ("agent_id", ASCENDING),
                ("created_at", ASCENDING),
                ("memory_id", ASCENDING),
            ]
        ),
        IndexModel([("tenant_id", ASCENDING), ("derived_from", ASCENDING)]),
        IndexModel([("expires_at", ASCENDING)]),
    ],
}
"""An agent's memories in listing order (listings, counts, retention, an agent's deletion; the
scope and type conditions are checked on the agent's entries), memories by source
(`derived_from_any`, a multikey index), and memories by expiry (the sweeper walks those past
it). Sources, gone sources and slots are read by `_id`
only."""


def row_id(tenant_id: str, memory_id: str) -> str:
    """Rows are keyed by tenant first, so one tenant's ids never address another's rows."""
    return f"{tenant_id}:{memory_id}"


ROW_FIELDS = tuple(field.name for field in dataclasses.fields(MemoryRow))


def memory_row(doc: Mapping[str, Any]) -> MemoryRow:
    """A stored row as the service reads it: the storage key, outbox entries and any field the
    row type does not name stay here."""
    values = {name: doc[name] for name in ROW_FIELDS if doc.get(name) is not None}
    values["derived_from"] = tuple(doc.get("derived_from") or ())
    return MemoryRow(**values)


def mongo_filter(selection: Mapping[str, Any]) -> dict[str, Any]:
    """A flat selection (scalars, or lists meaning 'one of') as a Mongo query."""
    return {
        key: {"$in": list(value)} if isinstance(value, list | tuple) else value
        for key, value in selection.items()
    }


def _metadata_query(key: str, condition: MetadataCondition) -> tuple[str, Any]:
    """One metadata condition as a Mongo field and predicate; time ranges compare the instants
    kept beside the metadata (`metadata_at`), never the text."""
    if condition.exists is not None:
        return f"metadata.{key}", {"$exists": True, "$ne": None} if condition.exists else None
    if condition.in_ is not None:
        return f"metadata.{key}", {"$in": list(condition.in_)}
    if condition.gte is None and condition.lte is None:
        return f"metadata.{key}", condition.eq
    field = f"metadata_at.{key}" if condition.is_time_range else f"metadata.{key}"
    bounds = {"$gte": condition.bound("gte"), "$lte": condition.bound("lte")}
    return field, {op: value for op, value in bounds.items() if value is not None}


def selection_query(selection: Selection) -> dict[str, Any]:
    """A Selection as a Mongo query: the tenant and agents always, then what it names."""
    query: dict[str, Any] = {"tenant_id": selection.tenant_id}
    agents = list(selection.agent_ids)
    query["agent_id"] = agents[0] if len(agents) == 1 else {"$in": agents}
    if selection.statuses is not None and selection.at is not None:
        clauses = status_clauses(selection.statuses, selection.at)
        query["$or"] = clauses
    elif selection.statuses is not None:
        query["status"] = {"$in": list(selection.statuses)}
    types = selection.wanted_types()
    if types is not None:
        query["type"] = {"$in": list(types)}
    wanted = selection.filter
    for name in ("user_id", "session_id"):
        if getattr(wanted, name) is not None:
            query[name] = getattr(wanted, name)
    for key, condition in wanted.conditions().items():
        field, predicate = _metadata_query(key, condition)
        query[field] = predicate
    if selection.search:
        query["content"] = {"$regex": re.escape(selection.search), "$options": "i"}
    return query


def _after(position: Position, order: Order) -> dict[str, Any]:
    """Rows strictly past a position in the listing's (created_at, memory_id) order."""
    beyond = "$gt" if order == "oldest" else "$lt"
    return {
        "$or": [
            {"created_at": {beyond: position.created_at}},
            {"created_at": position.created_at, "memory_id": {beyond: position.memory_id}},
        ]
    }


def _row_update(fields: Mapping[str, Any], at: datetime, drop_content: bool) -> dict[str, Any]:
    """The update that sets a row's fields; with `drop_content`, only status and hashes stay."""
    update: dict[str, Any] = {"$set": {**fields, "updated_at": at}}
    if drop_content:
        update["$unset"] = {name: "" for name in CONTENT_FIELDS}
    return update


class MemoryRows:
    """The memory service's own rows."""

    def __init__(self, db: Any, *, source_index: bool = False) -> None:
        self.db = db
        self.collection = db[MEMORIES]
        self.source_index = source_index
        """Keep `memory_sources` (a server without multikey indexes, the local one) instead of
        reading the `derived_from` index (MongoDB)."""

    async def get(self, tenant_id: str, memory_id: str) -> MemoryRow | None:
        """One row of the tenant: the key starts with the tenant, and the row must say so too
        (the local server looks the `_id` up first and checks the tenant on that row)."""
        doc = await self.collection.find_one(
            {"_id": row_id(tenant_id, memory_id), "tenant_id": tenant_id}
        )
        return None if doc is None else memory_row(doc)

    async def owners(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, str]:
        """The agent of each of these memories the tenant has (any status), by memory id."""
        rows = await held_ids(self.collection, tenant_id, memory_ids, ["agent_id"])
        return {memory_id: str(row.get("agent_id", "")) for memory_id, row in rows.items()}

    async def get_many(self, tenant_id: str, memory_ids: Sequence[str]) -> dict[str, MemoryRow]:
        """Rows by id, keyed by memory id: one `_id $in` lookup, served by the `_id` index."""
        keys = [row_id(tenant_id, m) for m in dict.fromkeys(memory_ids)]
        if not keys:
            return {}
        cursor = self.collection.find({"_id": {"$in": keys}, "tenant_id": tenant_id})
        return {doc["memory_id"]: memory_row(doc) async for doc in cursor}

    async def set_fields(
        self,
        tenant_id: str,
        memory_id: str,
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> None:
        """Update one row; `drop_content` removes the content, keeping status and hashes."""
        await self.collection.update_one(
            {"_id": row_id(tenant_id, memory_id), "tenant_id": tenant_id},
            _row_update(fields, datetime.now(UTC), drop_content),
        )

    async def set_fields_many(
        self,
        tenant_id: str,
        changes: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        drop_content: bool = False,
    ) -> None:
        """Update many rows, each with its own fields, in one bulk write: a prune withdrew a
        thousand memories with a thousand `update_one`s, ~2 ms each here."""
        if not changes:
            return
        now = datetime.now(UTC)
        await self.collection.bulk_write(
            [
                UpdateOne(
                    {"_id": row_id(tenant_id, memory_id), "tenant_id": tenant_id},
                    _row_update(fields, now, drop_content),
                )
                for memory_id, fields in changes
            ],
            ordered=False,
        )

    async def set_pending(
        self,
        tenant_id: str,
        memory_ids: Sequence[str],
        fields: Mapping[str, Any],
        *,
        drop_content: bool = False,
    ) -> set[str]:
        """Set the same fields (a `status` among them) on the rows still pending, and return
        the ids of the rows that hold that status now (a row another delivery of the same vector
        set counts): one `_id $in` update per chunk (~0.8 ms a row here, half of
        `update_one`s), and a read of the chunk only when a row had moved on (deleted or
        withdrawn meanwhile). A row a newer version named meanwhile never becomes `active`;
        `drop_content` as for `set_fields`."""
        ids = list(dict.fromkeys(memory_ids))
        update = _row_update(fields, datetime.now(UTC), drop_content)
        unless = {"superseded_by": None} if fields["status"] == "active" else {}
        done: set[str] = set()
        for start in range(0, len(ids), LOOKUP_CHUNK):
            chunk = ids[start : start + LOOKUP_CHUNK]
            keys = [row_id(tenant_id, m) for m in chunk]
            result = await self.collection.update_many(
                {"_id": {"$in": keys}, "tenant_id": tenant_id, "status": "pending", **unless},
                update,
            )
            if result.matched_count == len(chunk):
                done.update(chunk)
                continue
            query = {"_id": {"$in": keys}, "tenant_id": tenant_id, "status": fields["status"]}
            done.update([row["memory_id"] async for row in self.collection.find(query)])
        return done

    async def supersede(
        self, tenant_id: str, memory_id: str, *, agent_id: str, by: str, held: str
    ) -> bool:
        """One conditional update: the agent's row holding `held` names its newer version
        (`active` becomes `superseded`; a `pending` one keeps its status for its store to
        settle); a row this version already named matches again, so a replay repeats nothing
        else. False when the row holds another status or another version named it."""
        fields: dict[str, Any] = {"superseded_by": by, "updated_at": datetime.now(UTC)}
        statuses = [held]
        if held == "active":
            fields["status"] = "superseded"
            statuses.append("superseded")
        result = await self.collection.update_one(
            {
                "_id": row_id(tenant_id, memory_id),
                "tenant_id": tenant_id,
                "agent_id": agent_id,
                "status": {"$in": statuses},
                "superseded_by": {"$in": [None, by]},
            },
            {"$set": fields},
        )
        return bool(result.matched_count)

    async def open_many(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]:
        """Create rows (fields and status each) in one insert, returned as a read would return
        them; None where a row with that id already exists (a replay or a retried write): an
        insert, not an upsert, so a replay never overwrites a row that has moved on."""
        now = datetime.now(UTC)
        docs = [
            {
                **fields,
                "_id": row_id(tenant_id, fields["memory_id"]),
                "tenant_id": tenant_id,
                "status": status,
                "updated_at": now,
            }
            for fields, status in rows
        ]
        present = await insert_new(self.collection, docs)
        return [
            None if n in present else memory_row(as_stored(self.collection, doc))
            for n, doc in enumerate(docs)
        ]

    async def reopen_dead_lettered(
        self, tenant_id: str, rows: Sequence[tuple[dict[str, Any], str]]
    ) -> list[MemoryRow | None]:
        """`open_many` for rows that already exist: those a dead letter left rejected are written
        whole again (the letter was replayed); None for every other row, which stays as it is."""
        keys = [row_id(tenant_id, fields["memory_id"]) for fields, _ in rows]
        query = {
            "_id": {"$in": keys},
            "tenant_id": tenant_id,
            "dead_lettered_at": {"$exists": True},
        }
        marked = {doc["_id"] async for doc in self.collection.find(query, {"_id": 1})}
        now = datetime.now(UTC)
        reopened: list[MemoryRow | None] = []
        for key, (fields, status) in zip(keys, rows, strict=True):
            if key not in marked:
                reopened.append(None)
                continue
            doc = {
                **fields,
                "_id": key,
                "tenant_id": tenant_id,
                "status": status,
                "updated_at": now,
            }
            result = await self.collection.replace_one(
                {"_id": key, "tenant_id": tenant_id, "dead_lettered_at": {"$exists": True}}, doc
            )
            stored = memory_row(as_stored(self.collection, doc))
            reopened.append(stored if result.matched_count else None)
        return reopened

    async def mark_dead_lettered(self, tenant_id: str, fields: Mapping[str, Any]) -> MemoryRow:
        """A dead-lettered write's row ends `rejected`: created with only these fields when its
        insert never happened, or moved from `pending` (its content dropped); a row already past
        pending is left as it is. Returns the row as it now stands."""
        key = {"_id": row_id(tenant_id, fields["memory_id"]), "tenant_id": tenant_id}
        now = datetime.now(UTC)
        doc = {**fields, **key, "status": "rejected", "updated_at": now}
        if await insert_new(self.collection, [doc]):
            marks = {name: fields[name] for name in ("reason", "dead_lettered_at")}
            await self.collection.update_one(
                {**key, "status": "pending"},
                _row_update({**marks, "status": "rejected"}, now, drop_content=True),
            )
            return await self.get(tenant_id, fields["memory_id"]) or memory_row(doc)
        return memory_row(doc)

    async def count(self, selection: Mapping[str, Any]) -> int:
        """How many rows a selection holds (the same selection `select` returns)."""
        return int(await self.collection.count_documents(mongo_filter(selection)))

    async def successors(
        self, tenant_id: str, agent_id: str, memory_id: str, since: datetime
    ) -> list[MemoryRow]:
        """The agent's rows naming this memory in `supersedes`, written since it was: the
        agent's listing index, walked from `since` on."""
        cursor = self.collection.find(
            {
                "tenant_id": tenant_id,
                "agent_id": agent_id,
                "created_at": {"$gte": since},
                "supersedes": memory_id,
            }
        ).limit(10)
        return [memory_row(doc) async for doc in cursor]

    async def select(self, selection: Mapping[str, Any], *, limit: int = 0) -> list[MemoryRow]:
        """Rows of a selection, oldest first."""
        cursor = self.collection.find(mongo_filter(selection)).sort(
            [("created_at", ASCENDING), ("memory_id", ASCENDING)]
        )
        if limit:
            cursor = cursor.limit(limit)
        return [memory_row(doc) async for doc in cursor]

    async def page(
        self, selection: Selection, order: Order, after: Position | None, limit: int
    ) -> list[MemoryRow]:
        """Up to `limit` rows of a selection past `after`, in a stable (created_at, memory_id)
        order: a keyset page, so rows written meanwhile never shift it."""
        query = selection_query(selection)
        if after is not None:
            query = {"$and": [query, _after(after, order)]}
        direction = ASCENDING if order == "oldest" else DESCENDING
        cursor = (
            self.collection.find(query)
            .sort([("created_at", direction), ("memory_id", direction)])
            .limit(limit)
        )
        return [memory_row(doc) async for doc in cursor]

    async def tally(self, selection: Selection) -> tuple[int, dict[str, int], dict[str, int]]:
        """How many rows a selection holds, by status and by type (the listing's own query)."""
        by_status: Counter[str] = Counter()
        by_type: Counter[str] = Counter()
        at = selection.at or datetime.now(UTC)
        shown = {"status": 1, "type": 1, "expires_at": 1}
        async for row in self.collection.find(selection_query(selection), shown):
            by_status[effective_status(row, at)] += 1
            by_type[str(row.get("type"))] += 1
        return sum(by_status.values()), dict(by_status), dict(by_type)

    async def lapsed(self, now: datetime, limit: int) -> list[MemoryRow]:
        """Live rows of every tenant past their expiry, soonest first: the expiry sweeper's
        batch, read through the `expires_at` index."""
        query = {"expires_at": {"$lte": now}, "status": {"$in": list(EXPIRABLE_STATUSES)}}
        cursor = self.collection.find(query).sort([("expires_at", ASCENDING)]).limit(limit)
        return [memory_row(doc) async for doc in cursor]

    async def select_by(self, selection: Selection) -> list[MemoryRow]:
        """Every row of a selection, oldest first (a scope clear's targets)."""
        cursor = self.collection.find(selection_query(selection)).sort(
            [("created_at", ASCENDING), ("memory_id", ASCENDING)]
        )
        return [memory_row(doc) async for doc in cursor]

    async def index_sources(self, tenant_id: str, memory_id: str, sources: Sequence[str]) -> None:
        """Name the memory under each of its sources where the source index is kept; written
        before the row, so a row that exists is always found through its sources."""
        await self.index_sources_many(tenant_id, [(memory_id, sources)])

    async def index_sources_many(
        self, tenant_id: str, named: Sequence[tuple[str, Sequence[str]]]
    ) -> None:
        """`index_sources` for many memories in one bulk write: an upsert per source, each
        adding its memories' ids."""
        if not self.source_index:
            return
        by_source: dict[str, list[str]] = defaultdict(list)
        for memory_id, sources in named:
            for source in dict.fromkeys(sources):
                by_source[source].append(memory_id)
        if not by_source:
            return
        upserts = [
            UpdateOne(
                {"_id": row_id(tenant_id, source), "tenant_id": tenant_id},
                {
                    "$addToSet": {"memory_ids": {"$each": memory_ids}},
                    "$set": {"tenant_id": tenant_id},
                },
                upsert=True,
            )
            for source, memory_ids in by_source.items()
        ]
        await self.db[SOURCES].bulk_write(upserts, ordered=False)

    async def derived_via_index(
        self, tenant_id: str, source_ids: Sequence[str], statuses: Sequence[str]
    ) -> list[MemoryRow]:
        """`derived_from_any`: through the `derived_from` index, or where the source index is
        kept, through it (`_id` lookups)."""
        if not self.source_index:
            return await self.derived_from_any(tenant_id, source_ids, statuses)
        keys = [row_id(tenant_id, s) for s in dict.fromkeys(source_ids)]
        memory_ids: set[str] = set()
        for start in range(0, len(keys), LOOKUP_CHUNK):
            query = {"_id": {"$in": keys[start : start + LOOKUP_CHUNK]}, "tenant_id": tenant_id}
            async for doc in self.db[SOURCES].find(query):
                memory_ids.update(doc.get("memory_ids", []))
        wanted = set(source_ids)
        rows = []
        ordered = sorted(memory_ids)
        for start in range(0, len(ordered), LOOKUP_CHUNK):
            found = await self.get_many(tenant_id, ordered[start : start + LOOKUP_CHUNK])
            rows += [
                row
                for row in found.values()
                if row.status in statuses and wanted.intersection(row.derived_from)
            ]
        return rows

    async def derived_from_any(
        self, tenant_id: str, source_ids: Sequence[str], statuses: Sequence[str]
    ) -> list[MemoryRow]:
        """Rows of the tenant naming any of the sources in `derived_from` (the `derived_from`
        index on MongoDB; a scan on the local server)."""
        cursor = self.collection.find(
            {
                "tenant_id": tenant_id,
                "derived_from": {"$in": list(source_ids)},
                "status": {"$in": list(statuses)},
            }
        )
        return [memory_row(doc) async for doc in cursor]

    async def count_derived_from(
        self,
        tenant_id: str,
        sources: Mapping[str, Sequence[str]],
        statuses: Sequence[str],
    ) -> dict[str, int]:
        """Per kind of source (records, facts, documents), how many rows of the tenant in these
        statuses name any of its ids, read from the rows' own `derived_from` (the proof a
        prune's verification relies on, independent of the source index): one indexed count
        per kind, or where the server cannot serve that index (the local server), one scan
        for every kind whose id matching is done here. The local server compared every row's
        sources with every id of a 10k-id `$in`, ~1 s for a thousand memories; one scan per
        kind read every row twice for a prune's records and facts (~5.5 s a scan with 200k
        memories stored, bench/growth.py)."""
        wanted = {kind: set(ids) for kind, ids in sources.items() if ids}
        counts = dict.fromkeys(sources, 0)
        if not wanted:
            return counts
        if not self.source_index:
            for kind, ids in wanted.items():
                query = {
                    "tenant_id": tenant_id,
                    "derived_from": {"$in": sorted(ids)},
                    "status": {"$in": list(statuses)},
                }
                counts[kind] = int(await self.collection.count_documents(query))
            return counts
        cursor = self.collection.find(
            {"tenant_id": tenant_id, "status": {"$in": list(statuses)}},
            {"derived_from": 1, "_id": 0},
        )
        async for row in cursor:
            named = row.get("derived_from") or ()
            for kind, ids in wanted.items():
                if named and not ids.isdisjoint(named):
                    counts[kind] += 1
        return counts

    async def mark_gone(self, tenant_id: str, source_ids: Sequence[str]) -> None:
        """Remember tombstoned sources (for the 'all sources gone' policy); one insert."""
        rows = [
            {"_id": row_id(tenant_id, s), "tenant_id": tenant_id, "source_id": s}
            for s in dict.fromkeys(source_ids)
        ]
        await insert_new(self.db[GONE_SOURCES], rows)

    async def gone(self, tenant_id: str, source_ids: Sequence[str]) -> set[str]:
        """Which of these sources are known to be tombstoned (one `_id $in` lookup)."""
        keys = [row_id(tenant_id, s) for s in dict.fromkeys(source_ids)]
        if not keys:
            return set()
        cursor = self.db[GONE_SOURCES].find({"_id": {"$in": keys}, "tenant_id": tenant_id})
        return {row["source_id"] async for row in cursor}
