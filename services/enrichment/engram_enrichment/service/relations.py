"""Walking relations: an entity's edges up to three hops out, and the shortest paths between
two entities, level by level over the relations collection's two indexes.

An entity exists (is *resolved*) while it has a live fact. An edge to an entity that does not
exist yet is listed with `resolved: false` and never walked through; an entity that does not
exist has no edges to list or walk, either way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field, replace
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
    meeting_paths,
    page,
    relation_row,
)
from engram_enrichment.domain.schema import Schema
from engram_enrichment.domain.timeline import in_time
from engram_enrichment.ports import RelationRows
from engram_enrichment.service.hubs import End, Hubs
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.ordered import Order, level_in_order


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
    checked: set[str] = field(default_factory=set)


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
WALKED = ("relation_id", "subject_id", "object_id", "predicate", "status")
"""A row's fields a walk reads: its ends and predicate to walk and order by, its status to keep
the live ones; a read in time takes the rest from the subject's view."""
GONE: dict[str, Any] = {"object_type": None, "attribute": None, "value": None, "support": []}


class RelationGraph:
    """Reads relations from both ends; bounded by depth, a visit cap and a page size. Reads in
    time judge each row by its subject entity's view then (`timeline.in_time`). Every level read
    tells `hubs` which nodes have many rows, for the listings after it."""

    def __init__(
        self,
        rows: RelationRows,
        max_visited: int = MAX_VISITED,
        entities: KnowledgeBase | None = None,
        schema: Schema | None = None,
        hubs: Hubs | None = None,
    ) -> None:
        self.rows = rows
        self.max_visited = max_visited
        self.entities = entities
        self.schema = schema or Schema()
        self.hubs = hubs or Hubs()

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
        """Every row touching the frontier the direction allows (each row once), as of when;
        only the fields walking and ordering need (`_whole` reads the rest of those shown)."""
        nodes = sorted(frontier)
        found: dict[str, dict[str, Any]] = {}
        cap = self.max_visited + 1
        ends: list[End] = []
        if direction in ("out", "both"):
            ends.append("subject")
        if direction in ("in", "both"):
            ends.append("object")
        for end in ends:
            rows = await self.rows.touching(tenant_id, nodes, end, predicate, cap, WALKED)
            self.hubs.note_rows(tenant_id, end, nodes, rows, len(rows) < cap)
            found |= {str(row["relation_id"]): row for row in rows}
        return await self._in_time(tenant_id, list(found.values()), when)

    async def _whole(self, tenant_id: str, edges: list[Edge]) -> list[Edge]:
        """The edges with their whole rows (those read in the page's order or in time already
        have them), by id; a row deleted since it was walked keeps its walked fields and empty
        others."""
        thin = [str(e.row["relation_id"]) for e in edges if "support" not in e.row]
        if not thin:
            return edges
        rows = {str(r["relation_id"]): r for r in await self.rows.by_id(tenant_id, thin)}
        return [
            replace(e, row={**GONE, **rows.get(str(e.row["relation_id"]), {}), **e.row})
            if "support" not in e.row
            else e
            for e in edges
        ]

    def _new_edges(
        self,
        rows: list[dict[str, Any]],
        frontier: set[str],
        direction: Direction,
        level: int,
        seen: Container[str],
    ) -> list[Edge]:
        """Each row once, as `edges_from` first gives it, unless a nearer level had it."""
        first: dict[str, Edge] = {}
        for e in edges_from(rows, frontier, direction, level):
            first.setdefault(str(e.row["relation_id"]), e)
        return [e for rid, e in first.items() if rid not in seen]

    async def _last_level_cap(
        self, tenant_id: str, walk: Walk, edges: list[Edge], visited: set[str]
    ) -> None:
        """The cap counts the last level's existing far ends, as when walking on: they are
        checked only when they could reach it and the rows have not already."""
        far = {e.other for e in edges} - visited
        if not walk.truncated and len(visited | far) > self.max_visited:
            unknown = sorted(far - walk.checked)
            walk.present |= await self.rows.present(tenant_id, unknown)
            walk.checked |= set(unknown)
            walk.truncated = len(visited | (far & walk.present)) > self.max_visited

    async def _walk_on(
        self, tenant_id: str, walk: Walk, edges: list[Edge], visited: set[str]
    ) -> set[str]:
        """The next frontier, this level's existing far ends not visited (added to `visited`);
        past the cap the walk is truncated."""
        ends = sorted({e.other for e in edges} - walk.checked)
        walk.present |= await self.rows.present(tenant_id, ends)
        walk.checked |= set(ends)
        frontier = {e.other for e in edges if e.other in walk.present} - visited
        visited |= frontier
        if len(visited) > self.max_visited:
            walk.truncated = True
        return frontier

    async def walk(
        self,
        tenant_id: str,
        start: str,
        direction: Direction,
        predicate: str | None,
        depth: int,
        when: When = NOW,
        *,
        enough: Callable[[list[Edge]], bool] | None = None,
    ) -> Walk:
        """Edges up to `depth` hops from an existing entity, each at its nearest depth; only
        ends that exist are walked on from. With `enough`, the walk stops after the first level
        whose edges (with the nearer ones) satisfy it, and the far ends of its last level are
        left for the caller to check (`Walk.checked` names those whose existence is known)."""
        if not await self.rows.present(tenant_id, [start]):
            raise NoSuchEntity(start)
        walk = Walk(present={start}, checked={start})
        visited = {start}
        seen: set[str] = set()
        frontier = {start}
        for level in range(1, depth + 1):
            rows = await self._level(tenant_id, frontier, direction, predicate, when)
            if len(rows) > self.max_visited:
                walk.truncated = True
            edges = self._new_edges(rows, frontier, direction, level, seen)
            seen |= {str(e.row["relation_id"]) for e in edges}
            walk.edges += edges
            if enough is not None and (level == depth or enough(walk.edges)):
                await self._last_level_cap(tenant_id, walk, edges, visited)
                break
            frontier = await self._walk_on(tenant_id, walk, edges, visited)
            if len(visited) > self.max_visited or not frontier:
                break
        return walk

    async def _paged(
        self,
        tenant_id: str,
        start: str,
        direction: Direction,
        predicate: str | None,
        depth: int,
        after: Order | None,
        limit: int,
    ) -> tuple[list[Edge], Walk]:
        """The page's edges and the one past it, nearest first, as of now. From the cursor's
        level on, each level is read in the listing's order only as far as they need
        (`ordered`); a level before the cursor's, or the cursor's when walked on from, is read
        whole for its far ends, the next frontier."""
        if not await self.rows.present(tenant_id, [start]):
            raise NoSuchEntity(start)
        walk = Walk(present={start}, checked={start})
        visited = {start}
        seen: dict[str, Mapping[str, Any]] = {}
        frontier = {start}
        found: list[Edge] = []
        for level in range(1, depth + 1):
            edges: list[Edge] | None = None
            if after is None or after[0] <= level:
                mark = after if after is not None and after[0] == level else None
                need = limit + 1 - len(found)
                shown, _ = await level_in_order(
                    self.rows,
                    tenant_id,
                    frontier,
                    direction,
                    predicate,
                    level,
                    seen,
                    mark,
                    need,
                    self.hubs,
                )
                found += shown
                if len(found) > limit or level == depth:
                    walk.truncated = walk.truncated or len(shown) > self.max_visited
                    await self._last_level_cap(tenant_id, walk, shown, visited)
                    break
                edges = shown if mark is None else None
            if edges is None:
                rows = await self._level(tenant_id, frontier, direction, predicate)
                walk.truncated = walk.truncated or len(rows) > self.max_visited
                edges = self._new_edges(rows, frontier, direction, level, seen)
            seen |= {str(e.row["relation_id"]): e.row for e in edges}
            frontier = await self._walk_on(tenant_id, walk, edges, visited)
            if len(visited) > self.max_visited or not frontier:
                break
        return found, walk

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
        """One page of the entity's edges, nearest first, with the cursor of the next page.

        Levels come nearest first, so the walk stops at the first level by which the page and
        one edge past it are known, and reads that level (now) only that far, in the page's
        order and whole; only the shown edges' far ends are checked for existence beyond those
        walked on from. A read in time reads whole levels."""
        after = decode_cursor(cursor) if cursor else None
        if cursor and after is None:
            raise BadCursor(cursor)

        def enough(edges: list[Edge]) -> bool:
            return len(page(edges, after, limit + 1)) > limit

        if when == NOW:
            found, walk = await self._paged(
                tenant_id, entity_id, direction, predicate, depth, after, limit
            )
            shown, more = found[:limit], len(found) > limit
        else:
            walk = await self.walk(
                tenant_id, entity_id, direction, predicate, depth, when, enough=enough
            )
            shown = page(walk.edges, after, limit)
            more = len(shown) == limit and len(page(walk.edges, after, limit + 1)) > limit
        unknown = sorted({e.other for e in shown} - walk.checked)
        walk.present |= await self.rows.present(tenant_id, unknown)
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
        through existing ones only, up to `max_depth` hops; none past the visit cap.

        A bidirectional breadth-first search: each step expands the smaller frontier (start's
        or goal's) by one level; the first step whose new nodes the other side has reached
        finds every shortest path, through the nodes where the sides meet."""
        found = await self.rows.present(tenant_id, [start, goal])
        missing = [e for e in (start, goal) if e not in found]
        if missing:
            raise NoSuchEntity(missing[0])
        if start == goal:
            return {"from": start, "to": goal, "paths": [], "length": 0, "truncated": False}
        sides = [_Side(start), _Side(goal)]
        truncated = False
        for length in range(1, max_depth + 1):
            near, far = sorted(sides, key=lambda side: len(side.frontier))
            rows = await self._level(tenant_id, near.frontier, "both", None)
            truncated = truncated or len(rows) > self.max_visited
            level = near.depth + 1
            edges = [
                e
                for e in edges_from(rows, near.frontier, "both", level)
                if e.other not in near.visited
            ]
            fresh = sorted({e.other for e in edges} - far.visited)
            alive = await self.rows.present(tenant_id, fresh) | (
                {e.other for e in edges} & far.visited
            )
            reached: set[str] = set()
            for edge in edges:
                if edge.other in alive:
                    near.parents[edge.other].append(edge)
                    reached.add(edge.other)
            near.depth = level
            near.visited |= reached
            near.frontier = reached
            meets = reached & far.visited
            if meets:
                forward, backward = sides[0].parents, sides[1].parents
                paths = meeting_paths(forward, backward, meets, start, goal, limit)
                whole = await self._whole(tenant_id, [e for p in paths for e in p])
                nodes = sides[0].visited | sides[1].visited
                views = iter([edge_view(e, nodes) for e in whole])
                return {
                    "from": start,
                    "to": goal,
                    "length": length,
                    "paths": [{"length": length, "edges": [next(views) for _ in p]} for p in paths],
                    "truncated": truncated,
                }
            visited = len(sides[0].visited | sides[1].visited)
            if not reached or visited > self.max_visited:
                truncated = truncated or visited > self.max_visited
                break
        return {"from": start, "to": goal, "paths": [], "length": None, "truncated": truncated}


@dataclass
class _Side:
    """One end of a bidirectional search: how far it has gone, what it reached, and each
    reached node's edges from the level before (`via` the node nearer this end)."""

    end: str
    depth: int = 0
    visited: set[str] = field(default_factory=set)
    frontier: set[str] = field(default_factory=set)
    parents: dict[str, list[Edge]] = field(default_factory=lambda: defaultdict(list))

    def __post_init__(self) -> None:
        self.visited = {self.end}
        self.frontier = {self.end}
