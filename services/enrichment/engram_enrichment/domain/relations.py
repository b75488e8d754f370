"""Relations between entities, pure: the rows an entity's relation facts project, edges seen
from one end, the traversal's order and cursor, and shortest paths from a BFS's parents.

A relation is a live fact of a declared reference field (`Fact.relation`); its row in the
relations collection is a listing copy, like a contradiction's, written after the entity. A
relation a later period closed keeps its row (status `superseded`): a walk sees it only when it
reads in time (`valid_at`, `as_of`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engram_enrichment.domain.model import Entity, Fact

Direction = Literal["out", "in", "both"]
MAX_DEPTH = 3
MAX_PATH_DEPTH = 4
MAX_VISITED = 2000
"""Nodes a traversal or a path search reaches at most; past it, it stops and says so."""


def relation_row(entity: Entity, fact: Fact) -> dict[str, Any]:
    """A live relation fact as its listing row: ends, predicate, status and support."""
    relation = fact.relation
    assert relation is not None
    return {
        "relation_id": fact.fact_id,
        "subject_id": entity.entity_id,
        "subject_type": entity.entity_type,
        "predicate": relation.predicate,
        "object_id": relation.object_id,
        "object_type": relation.object_type,
        "many": relation.many,
        "attribute": fact.attribute,
        "value": fact.value,
        "status": fact.status,
        "contradiction_id": fact.contradiction_id,
        "support": [ref.model_dump(mode="json") for ref in fact.support],
        "first_seen": fact.first_seen.isoformat(),
        "last_seen": fact.last_seen.isoformat(),
        "valid_from": fact.valid_from.isoformat() if fact.valid_from else None,
        "valid_to": fact.valid_to.isoformat() if fact.valid_to else None,
        "superseded_by": fact.superseded_by,
    }


def relation_changes(entity: Entity, causes: set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows to write (live relations these causes touched, and those a later period closed,
    which reads in time still walk) and the relation ids to delete (relations they withdrew or
    a resolution superseded)."""
    rows: list[dict[str, Any]] = []
    gone: list[str] = []
    for fact in entity.facts.values():
        if fact.relation is None or fact.last_cause not in causes:
            continue
        if fact.held:
            rows.append(relation_row(entity, fact))
        else:
            gone.append(fact.fact_id)
    return rows, gone


def supported_by(rows: Iterable[Mapping[str, Any]], records: set[str]) -> int:
    """Rows whose support still names one of the records."""
    return sum(1 for row in rows if any(s["record_id"] in records for s in row["support"]))


@dataclass(frozen=True)
class Edge:
    """A relation seen from the node it was reached from."""

    row: Mapping[str, Any]
    direction: Literal["out", "in"]
    depth: int
    via: str

    @property
    def other(self) -> str:
        """The end that is not `via`."""
        return str(self.row["object_id"] if self.direction == "out" else self.row["subject_id"])

    def order(self) -> tuple[int, str, str, str, str]:
        """Nearest first, then by predicate, direction, far end and id: stable across pages."""
        return (
            self.depth,
            str(self.row["predicate"]),
            self.direction,
            self.other,
            str(self.row["relation_id"]),
        )


def edges_from(
    rows: Iterable[Mapping[str, Any]], frontier: set[str], direction: Direction, depth: int
) -> list[Edge]:
    """Each row as an edge from the frontier node it touches (twice for a row joining two)."""
    found: list[Edge] = []
    for row in rows:
        subject, obj = str(row["subject_id"]), str(row["object_id"])
        if direction in ("out", "both") and subject in frontier:
            found.append(Edge(row, "out", depth, subject))
        if direction in ("in", "both") and obj in frontier:
            found.append(Edge(row, "in", depth, obj))
    return found


def encode_cursor(order: Sequence[Any]) -> str:
    """An opaque cursor for the edge last returned."""
    return base64.urlsafe_b64encode(json.dumps(list(order)).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str, str, str, str] | None:
    """The order a cursor names, or None when it is not one of ours."""
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(raw, list) or len(raw) != 5 or not isinstance(raw[0], int):
        return None
    if not all(isinstance(part, str) for part in raw[1:]):
        return None
    return (raw[0], raw[1], raw[2], raw[3], raw[4])


def page(edges: Sequence[Edge], after: tuple[Any, ...] | None, limit: int) -> list[Edge]:
    """The edges after the cursor, in order, at most `limit`."""
    ordered = sorted(edges, key=Edge.order)
    if after is not None:
        ordered = [e for e in ordered if e.order() > after]
    return ordered[:limit]


def shortest_paths(
    parents: Mapping[str, Sequence[Edge]], start: str, goal: str, limit: int
) -> list[list[Edge]]:
    """Up to `limit` paths from start to goal through the BFS parents (each node's edges from
    the level before it), in a stable order; all are equally short."""
    paths: list[list[Edge]] = []

    def walk(node: str, tail: list[Edge]) -> None:
        if len(paths) >= limit:
            return
        if node == start:
            paths.append(list(reversed(tail)))
            return
        for edge in sorted(parents.get(node, []), key=Edge.order):
            walk(edge.via, [*tail, edge])

    walk(goal, [])
    return paths


def _flip(edge: Edge) -> Edge:
    """The edge walked from its other end."""
    return Edge(edge.row, "in" if edge.direction == "out" else "out", edge.depth, edge.other)


def _routes(parents: Mapping[str, Sequence[Edge]], node: str, end: str) -> Iterator[list[Edge]]:
    """Every path from `end` to `node` through a BFS's parents (edges reached from the level
    before), each from `end` outward, in a stable order."""
    if node == end:
        yield []
        return
    for edge in sorted(parents.get(node, []), key=Edge.order):
        for head in _routes(parents, edge.via, end):
            yield [*head, edge]


def meeting_paths(
    forward: Mapping[str, Sequence[Edge]],
    backward: Mapping[str, Sequence[Edge]],
    meets: Iterable[str],
    start: str,
    goal: str,
    limit: int,
) -> list[list[Edge]]:
    """Up to `limit` paths from start to goal of a bidirectional search: through each meeting
    node (in order), each way from start to it (`forward` parents) joined to each way from it
    to goal (`backward` parents, walked the other way). Each edge's depth is its hop number."""
    paths: list[list[Edge]] = []
    for meet in sorted(meets):
        for head in _routes(forward, meet, start):
            for tail in _routes(backward, meet, goal):
                hops = head + [_flip(e) for e in reversed(tail)]
                paths.append(
                    [Edge(e.row, e.direction, n, e.via) for n, e in enumerate(hops, start=1)]
                )
                if len(paths) >= limit:
                    return paths
    return paths
