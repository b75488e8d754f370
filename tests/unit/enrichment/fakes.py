"""Hand-written fakes behind enrichment's ports: stores (one honest, two that fail), an outbox."""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal

from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.domain.stored import unconfirmed
from engram_enrichment.ports import ConcurrentUpdate
from engram_events import Envelope


class MemoryStore:
    """The port in memory, with Mongo's semantics for versions and copies."""

    def __init__(self) -> None:
        self.entities: dict[str, dict[str, Any]] = {}
        self.contradictions: dict[str, dict[str, Any]] = {}
        self.records: dict[str, str] = {}
        self.saves = 0
        self.bulk_loads = 0

    async def load(self, tenant_id: str, entity_id: str) -> dict[str, Any] | None:
        doc = self.entities.get(f"{tenant_id}:{entity_id}")
        return copy.deepcopy(doc) if doc else None

    async def save(self, tenant_id: str, doc: dict[str, Any], expected_version: int) -> None:
        key = f"{tenant_id}:{doc['entity_id']}"
        current = self.entities.get(key)
        if (current["version"] if current else 0) != expected_version:
            raise ConcurrentUpdate(key)
        self.saves += 1
        self.entities[key] = copy.deepcopy(doc)

    async def load_many(
        self, tenant_id: str, entity_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        self.bulk_loads += 1
        found = {e: await self.load(tenant_id, e) for e in entity_ids}
        return {e: doc for e, doc in found.items() if doc is not None}

    async def save_many(
        self, tenant_id: str, writes: Sequence[tuple[dict[str, Any], int]]
    ) -> set[str]:
        conflicts: set[str] = set()
        for doc, expected in writes:
            try:
                await self.save(tenant_id, doc, expected)
            except ConcurrentUpdate:
                conflicts.add(doc["entity_id"])
        return conflicts

    async def unconfirmed_many(
        self, tenant_id: str, intended: dict[str, dict[str, Any]]
    ) -> dict[str, list[str]]:
        stored = await self.load_many(tenant_id, list(intended))
        return {
            e: unconfirmed(doc, stored[e]) if e in stored else ["entity"]
            for e, doc in intended.items()
        }

    async def index_contradictions(self, tenant_id: str, docs: list[dict[str, Any]]) -> None:
        for doc in docs:
            self.contradictions[f"{tenant_id}:{doc['contradiction_id']}"] = copy.deepcopy(doc)

    async def contradiction(self, tenant_id: str, contradiction_id: str) -> dict[str, Any] | None:
        return copy.deepcopy(self.contradictions.get(f"{tenant_id}:{contradiction_id}"))

    async def list_contradictions(
        self, tenant_id: str, status: str | None, limit: int, entity_id: str | None = None
    ) -> list[dict[str, Any]]:
        rows = [
            d
            for k, d in self.contradictions.items()
            if k.startswith(f"{tenant_id}:")
            and (status is None or d["status"] == status)
            and (entity_id is None or d["entity_id"] == entity_id)
        ]
        return rows[:limit]

    async def list_entities(
        self, tenant_id: str, entity_type: str | None, after: str | None, limit: int
    ) -> list[dict[str, Any]]:
        rows = [
            {"entity_id": d["entity_id"], "entity_type": d["entity_type"]}
            for k, d in sorted(self.entities.items())
            if k.startswith(f"{tenant_id}:")
            and (entity_type is None or d["entity_type"] == entity_type)
            and (after is None or d["entity_id"] > after)
        ]
        return rows[:limit]

    async def remember_record(self, tenant_id: str, record_id: str, entity_id: str) -> None:
        self.records.setdefault(f"{tenant_id}:{record_id}", entity_id)

    async def remember_records(self, tenant_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        for record_id, entity_id in pairs:
            await self.remember_record(tenant_id, record_id, entity_id)

    async def entities_of_records(
        self, tenant_id: str, record_ids: Sequence[str]
    ) -> dict[str, str]:
        known = ((r, self.records.get(f"{tenant_id}:{r}")) for r in record_ids)
        return {r: e for r, e in known if e is not None}


class MemoryPassageRows:
    """The passage rows, in memory, by tenant and passage id."""

    def __init__(self) -> None:
        self.rows: dict[str, PassageRow] = {}
        self.reads: list[list[str]] = []

    async def put(self, rows: Sequence[PassageRow]) -> None:
        for row in rows:
            self.rows[f"{row.tenant_id}:{row.passage_id}"] = row

    async def get_many(self, tenant_id: str, passage_ids: Sequence[str]) -> dict[str, PassageRow]:
        self.reads.append(list(passage_ids))
        found = (self.rows.get(f"{tenant_id}:{pid}") for pid in passage_ids)
        return {row.passage_id: row for row in found if row is not None}

    async def remove(self, tenant_id: str, passage_ids: Sequence[str]) -> None:
        for pid in passage_ids:
            self.rows.pop(f"{tenant_id}:{pid}", None)

    async def count_of_documents(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        return sum(
            1
            for row in self.rows.values()
            if row.tenant_id == tenant_id and row.passage.document_id in document_ids
        )

    async def with_embedded_text(
        self, tenant_id: str, document_id: str, digests: Sequence[str]
    ) -> list[PassageRow]:
        return [
            row
            for row in self.rows.values()
            if row.tenant_id == tenant_id
            and row.passage.document_id == document_id
            and row.embedded_sha256 in digests
        ]


class SilentlyIgnoringStore(MemoryStore):
    """Acknowledges every save and keeps nothing: the 'applied: true' defect."""

    async def save(self, tenant_id: str, doc: dict[str, Any], expected_version: int) -> None:
        self.saves += 1


class OneFactLostStore(MemoryStore):
    """Writes the entity but drops the support of one fact: a partial write."""

    async def save(self, tenant_id: str, doc: dict[str, Any], expected_version: int) -> None:
        damaged = copy.deepcopy(doc)
        if damaged["facts"]:
            damaged["facts"][-1]["support"] = []
        await super().save(tenant_id, damaged, expected_version)


class StagedEvents:
    """The outbox port in memory: every event staged, in order."""

    def __init__(self) -> None:
        self.staged: list[Envelope[Any]] = []

    async def stage(self, envelopes: Iterable[Envelope[Any]]) -> int:
        batch = list(envelopes)
        self.staged += batch
        return len(batch)


class MemoryRelationRows:
    """Relation rows in memory; an entity exists while the store holds it with a live fact."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.rows: dict[str, dict[str, Any]] = {}
        self.read = 0
        """Rows `touching` has returned, to see a walk stop reading early."""
        self.ordered: list[tuple[tuple[str, ...], str, int, list[str]]] = []
        """Each `in_order` read: its nodes, end, the rows it matched before the limit (what the
        local server sorts for an `$in`) and the ids it returned."""

    async def put(self, tenant_id: str, rows: Sequence[dict[str, Any]]) -> None:
        for row in rows:
            self.rows[f"{tenant_id}:{row['relation_id']}"] = {**row, "tenant_id": tenant_id}

    async def remove(self, tenant_id: str, relation_ids: Sequence[str]) -> None:
        for relation_id in relation_ids:
            self.rows.pop(f"{tenant_id}:{relation_id}", None)

    async def touching(
        self,
        tenant_id: str,
        node_ids: Sequence[str],
        end: Literal["subject", "object"],
        predicate: str | None,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        nodes = set(node_ids)
        found = [
            row
            for row in self.rows.values()
            if row["tenant_id"] == tenant_id
            and row[f"{end}_id"] in nodes
            and predicate in (None, row["predicate"])
        ][:limit]
        self.read += len(found)
        if fields:
            found = [{k: row[k] for k in fields if k in row} for row in found]
        return copy.deepcopy(found)

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
        other = "object_id" if end == "subject" else "subject_id"
        nodes = set(node_ids)
        skipped = set(skip)

        def after(row: dict[str, Any]) -> bool:
            if start is None:
                return True
            if start[1] is None:
                return bool(row["predicate"] > start[0])
            return (row["predicate"], row[other]) >= start

        matched = sorted(
            (
                row
                for row in self.rows.values()
                if row["tenant_id"] == tenant_id
                and row[f"{end}_id"] in nodes
                and predicate in (None, row["predicate"])
                and after(row)
                and row["relation_id"] not in skipped
            ),
            key=lambda row: (row["predicate"], row[other]),
        )
        found = matched[:limit]
        self.read += len(found)
        ids = [str(row["relation_id"]) for row in found]
        self.ordered.append((tuple(node_ids), end, len(matched), ids))
        if fields:
            found = [{k: row[k] for k in fields if k in row} for row in found]
        return copy.deepcopy(found)

    async def by_id(self, tenant_id: str, relation_ids: Sequence[str]) -> list[dict[str, Any]]:
        keys = [f"{tenant_id}:{r}" for r in dict.fromkeys(relation_ids)]
        return copy.deepcopy([self.rows[k] for k in keys if k in self.rows])

    async def present(self, tenant_id: str, entity_ids: Sequence[str]) -> set[str]:
        return {
            e
            for e in entity_ids
            if (doc := self.store.entities.get(f"{tenant_id}:{e}")) and doc["fact_count"] > 0
        }
