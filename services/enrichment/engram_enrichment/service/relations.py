"""Walking relations: an entity's edges up to three hops out, and the shortest paths between
two entities, level by level over the relations collection's two indexes.

An entity exists (is *resolved*) while it has a live fact. An edge to an entity that does not
exist yet is listed with `resolved: false` and never walked through; an entity that does not
exist has no edges to list or walk, either way.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram_enrichment.domain.model import LIVE
from engram_enrichment.domain.relations import (
    MAX_VISITED,
    Direction,
    Edge,
    decode_cursor,
    edges_from,
    encode_cursor,
    page,
    relation_row,
    shortest_paths,
)
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.timeline import in_time
from engram_enrichment.ports import RelationRows
from engram_enrichment.service.knowledge import KnowledgeBase


class NoSuchEntity(Exception):
    """The entity named does not exist (or no longer has a live fact)."""


class BadCursor(ValueError):
    """A cursor this listing did not hand out."""


@dataclass
class Walk:
    """Edges reached, whether the visit cap cut the walk short, and which nodes exist."""

    edges: list[Edge] = field(default_factory=list)
    truncated: bool = False
    present: set[str] = field(default_factory=set)


def edge_view(edge: Edge, present: set[str]) -> dict[str, Any]:
    """An edge as callers see it: the relation row, which way it was walked, from where, how
    far, and whether its far end exists."""
    row = edge.row
    return {
        "relation_id": row["relation_id"],
        "subject_id": row["subject_id"],
        "predicate": row["predicate"],
        "object_id": row["object_id"],
        "object_type": row["object_type"],
        "direction": edge.direction,
        "depth": edge.depth,
        "from": edge.via,
        "to": edge.other,
        "resolved": edge.other in present,
        "status": row["status"],
        "contradiction_id": row.get("contradiction_id"),
        "attribute": row["attribute"],
        "value": row["value"],
        "support": row["support"],
    }


@dataclass(frozen=True)
class When:
    """A read in time: what was true `valid_at`, as Engram knew it `as_of` (None: now)."""

    valid_at: datetime | None = None
    as_of: datetime | None = None


NOW = When()


class RelationGraph:
    """Reads relations from both ends; bounded by depth, a visit cap and a page size. Reads in
    time judge each row by its subject entity's view then (`timeline.in_time`)."""

    def __init__(
        self,
        rows: RelationRows,
        max_visited: int = MAX_VISITED,
        entities: KnowledgeBase | None = None,
        schema: Schema | None = None,
    ) -> None:
        self.rows = rows
        self.max_visited = max_visited
        self.entities = entities
        self.schema = schema or Schema()

    async def _in_time(
        self, tenant_id: str, rows: list[dict[str, Any]], when: When
    ) -> list[dict[str, Any]]:
        """Now: the live rows. In time: the rows whose fact holds in its subject's view then,
        with that view's status, support and period."""
        if when == NOW or self.entities is None:
            return [row for row in rows if row["status"] in LIVE]
        subjects = sorted({str(row["subject_id"]) for row in rows})
        views = {
            e.entity_id: in_time(e, self.schema, when.valid_at, when.as_of)
            for e in await self.entities.load_many(tenant_id, subjects)
        }
        found: list[dict[str, Any]] = []
        for row in rows:
            view = views.get(str(row["subject_id"]))
            fact = view.facts.get(str(row["relation_id"])) if view else None
            if view is not None and fact is not None and fact.live:
                found.append({**row, **relation_row(view, fact)})
        return found

    async def _level(
        self,
        tenant_id: str,
        frontier: set[str],
        direction: Direction,
        predicate: str | None,
        when: When = NOW,
    ) -> list[dict[str, Any]]:
        """Every row touching the frontier the direction allows (each row once), as of when."""
        nodes = sorted(frontier)
        found: dict[str, dict[str, Any]] = {}
        cap = self.max_visited + 1
        if direction in ("out", "both"):
            for row in await self.rows.touching(tenant_id, nodes, "subject", predicate, cap):
                found[str(row["relation_id"])] = row
        if direction in ("in", "both"):
            for row in await self.rows.touching(tenant_id, nodes, "object", predicate, cap):
                found[str(row["relation_id"])] = row
        return await self._in_time(tenant_id, list(found.values()), when)

    async def walk(
        self,
        tenant_id: str,
        start: str,
        direction: Direction,
        predicate: str | None,
        depth: int,
        when: When = NOW,
    ) -> Walk:
        """Edges up to `depth` hops from an existing entity, each at its nearest depth; only
        ends that exist are walked on from."""
        if not await self.rows.present(tenant_id, [start]):
            raise NoSuchEntity(start)
        walk = Walk(present={start})
        visited = {start}
        seen: set[str] = set()
        frontier = {start}
        for level in range(1, depth + 1):
            rows = await self._level(tenant_id, frontier, direction, predicate, when)
            if len(rows) > self.max_visited:
                walk.truncated = True
            first: dict[str, Edge] = {}
            for e in edges_from(rows, frontier, direction, level):
                first.setdefault(str(e.row["relation_id"]), e)
            edges = [e for rid, e in first.items() if rid not in seen]
            walk.present |= await self.rows.present(tenant_id, sorted({e.other for e in edges}))
            seen |= {str(e.row["relation_id"]) for e in edges}
            walk.edges += edges
            frontier = {e.other for e in edges if e.other in walk.present} - visited
            visited |= frontier
            if len(visited) > self.max_visited:
                walk.truncated = True
                break
            if not frontier:
                break
        return walk

    async def relations(
        self,
        tenant_id: str,
        entity_id: str,
        *,
        direction: Direction,
        predicate: str | None,
        depth: int,
        limit: int,
        cursor: str | None,
        when: When = NOW,
    ) -> dict[str, Any]:
        """One page of the entity's edges, nearest first, with the cursor of the next page."""
        after = decode_cursor(cursor) if cursor else None
        if cursor and after is None:
            raise BadCursor(cursor)
        walk = await self.walk(tenant_id, entity_id, direction, predicate, depth, when)
        shown = page(walk.edges, after, limit)
        more = len(shown) == limit and len(page(walk.edges, after, limit + 1)) > limit
        return {
            "entity_id": entity_id,
            "relations": [edge_view(e, walk.present) for e in shown],
            "next_cursor": encode_cursor(shown[-1].order()) if more else None,
            "truncated": walk.truncated,
        }

    async def paths(
        self, tenant_id: str, start: str, goal: str, max_depth: int, limit: int
    ) -> dict[str, Any]:
        """The shortest paths (relations walked either way) between two existing entities,
        through existing ones only, up to `max_depth` hops; none past the visit cap."""
        found = await self.rows.present(tenant_id, [start, goal])
        missing = [e for e in (start, goal) if e not in found]
        if missing:
            raise NoSuchEntity(missing[0])
        if start == goal:
            return {"from": start, "to": goal, "paths": [], "length": 0, "truncated": False}
        parents: dict[str, list[Edge]] = defaultdict(list)
        visited = {start}
        frontier = {start}
        truncated = False
        for level in range(1, max_depth + 1):
            rows = await self._level(tenant_id, frontier, "both", None)
            truncated = truncated or len(rows) > self.max_visited
            edges = [e for e in edges_from(rows, frontier, "both", level) if e.other not in visited]
            alive = await self.rows.present(tenant_id, sorted({e.other for e in edges}))
            reached: set[str] = set()
            for edge in edges:
                if edge.other in alive:
                    parents[edge.other].append(edge)
                    reached.add(edge.other)
            if goal in reached:
                paths = shortest_paths(parents, start, goal, limit)
                return {
                    "from": start,
                    "to": goal,
                    "length": level,
                    "paths": [
                        {"length": level, "edges": [edge_view(e, alive | visited) for e in p]}
                        for p in paths
                    ],
                    "truncated": truncated,
                }
            visited |= reached
            frontier = reached
            if not frontier or len(visited) > self.max_visited:
                truncated = truncated or len(visited) > self.max_visited
                break
        return {"from": start, "to": goal, "paths": [], "length": None, "truncated": truncated}
