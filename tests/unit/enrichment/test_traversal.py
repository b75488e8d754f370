"""Traversal's speed-ups keep its answers: a listing stops reading at the level its page ends
in, and the bidirectional path search finds exactly the one-sided search's shortest paths."""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from typing import Any

import pytest

from engram_enrichment.domain.relations import (
    Direction,
    Edge,
    edges_from,
    page,
    shortest_paths,
)
from engram_enrichment.service.hubs import HUB
from engram_enrichment.service.relations import RelationGraph
from tests.unit.enrichment.fakes import MemoryRelationRows, MemoryStore

pytestmark = pytest.mark.unit

T = "tnt_a"


def graph_of(
    edges: list[tuple[str, str, str]], nodes: set[str], missing: set[str] | None = None
) -> tuple[RelationGraph, MemoryRelationRows]:
    store = MemoryStore()
    rows = MemoryRelationRows(store)
    for node in nodes - (missing or set()):
        store.entities[f"{T}:{node}"] = {"entity_id": node, "fact_count": 1}
    for n, (subject, predicate, obj) in enumerate(edges):
        rows.rows[f"{T}:r{n:04d}"] = {
            "tenant_id": T,
            "relation_id": f"r{n:04d}",
            "subject_id": subject,
            "subject_type": "x",
            "predicate": predicate,
            "object_id": obj,
            "object_type": "x",
            "many": False,
            "attribute": predicate,
            "value": obj,
            "status": "active",
            "contradiction_id": None,
            "support": [],
        }
    return RelationGraph(rows), rows


def one_sided(
    rows: list[dict[str, Any]], present: set[str], start: str, goal: str, max_depth: int
) -> tuple[int | None, set[tuple[str, ...]]]:
    """The reference: level-by-level BFS from start, every shortest path as relation ids."""
    parents: dict[str, list[Edge]] = defaultdict(list)
    visited, frontier = {start}, {start}
    for level in range(1, max_depth + 1):
        edges = [e for e in edges_from(rows, frontier, "both", level) if e.other not in visited]
        reached = set()
        for e in edges:
            if e.other in present:
                parents[e.other].append(e)
                reached.add(e.other)
        if goal in reached:
            paths = shortest_paths(parents, start, goal, 10**6)
            return level, {tuple(str(e.row["relation_id"]) for e in p) for p in paths}
        visited |= reached
        frontier = reached
        if not frontier:
            break
    return None, set()


@pytest.mark.parametrize("seed", range(40))
async def test_bidirectional_paths_are_the_one_sided_shortest_paths(seed: int) -> None:
    rnd = random.Random(seed)
    nodes = {f"n{i}" for i in range(rnd.randint(4, 30))}
    names = sorted(nodes)
    edges = [
        (rnd.choice(names), rnd.choice(["a", "b"]), rnd.choice(names))
        for _ in range(rnd.randint(3, 60))
    ]
    missing = {n for n in names[2:] if rnd.random() < 0.15}
    graph, rows = graph_of(edges, nodes, missing)
    start, goal = names[0], names[1]
    depth = rnd.randint(1, 4)
    found = await graph.paths(T, start, goal, depth, 10**6)
    want_length, want = one_sided(list(rows.rows.values()), nodes - missing, start, goal, depth)
    assert found["length"] == want_length
    got = {tuple(e["relation_id"] for e in p["edges"]) for p in found["paths"]}
    assert got == want
    for path in found["paths"]:
        hops = path["edges"]
        assert hops[0]["from"] == start and hops[-1]["to"] == goal
        assert [e["depth"] for e in hops] == list(range(1, len(hops) + 1))
        assert all(a["to"] == b["from"] for a, b in itertools.pairwise(hops))
        assert all(e["resolved"] for e in hops)
        for e in hops:
            ends = (e["subject_id"], e["object_id"])
            assert (e["from"], e["to"]) == (ends if e["direction"] == "out" else ends[::-1])


async def test_paths_honour_the_limit_and_meet_in_the_middle() -> None:
    # a ladder: s - m{i} - g for 5 middles: five shortest paths of two hops
    edges = [("s", "p", f"m{i}") for i in range(5)] + [(f"m{i}", "p", "g") for i in range(5)]
    graph, _ = graph_of(edges, {"s", "g"} | {f"m{i}" for i in range(5)})
    found = await graph.paths(T, "s", "g", 4, 3)
    assert found["length"] == 2 and len(found["paths"]) == 3
    assert [p["edges"][0]["to"] for p in found["paths"]] == ["m0", "m1", "m2"]
    assert found["paths"][0]["edges"][1]["support"] == []


async def test_a_listing_stops_reading_at_the_level_its_page_ends_in() -> None:
    # a hub with 50 neighbours, each with 20 more: a page of 10 ends within level 1, which is
    # read in order only about as far as the page (each end its share first, then twice that)
    edges = [("hub", "p", f"a{i}") for i in range(50)]
    edges += [(f"a{i}", "q", f"b{i}_{j}") for i in range(50) for j in range(20)]
    nodes = {"hub"} | {f"a{i}" for i in range(50)}
    nodes |= {f"b{i}_{j}" for i in range(50) for j in range(20)}
    graph, rows = graph_of(edges, nodes)
    first = await graph.relations(
        T, "hub", direction="both", predicate=None, depth=2, limit=10, cursor=None
    )
    assert rows.read <= 2 * 12
    assert len(first["relations"]) == 10 and first["next_cursor"] and not first["truncated"]
    assert all(r["support"] == [] and r["resolved"] for r in first["relations"])
    # the pages together are the whole listing, nearest first
    whole = await graph.relations(
        T, "hub", direction="both", predicate=None, depth=2, limit=5000, cursor=None
    )
    assert len(whole["relations"]) == 1050
    seen: list[str] = []
    cursor = None
    while True:
        page = await graph.relations(
            T, "hub", direction="both", predicate=None, depth=2, limit=300, cursor=cursor
        )
        seen += [r["relation_id"] for r in page["relations"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [r["relation_id"] for r in whole["relations"]]


async def test_a_listing_checks_only_the_shown_far_ends() -> None:
    edges = [("hub", "p", f"a{i}") for i in range(5)] + [("a0", "q", "ghost")]
    graph, _ = graph_of(edges, {"hub", "ghost"} | {f"a{i}" for i in range(5)}, {"ghost", "a4"})
    found = await graph.relations(
        T, "hub", direction="out", predicate=None, depth=2, limit=100, cursor=None
    )
    resolved = {r["to"]: r["resolved"] for r in found["relations"]}
    assert resolved == {"a0": True, "a1": True, "a2": True, "a3": True, "a4": False, "ghost": False}


async def test_truncated_counts_the_last_levels_existing_ends_as_before() -> None:
    # 6 rows and neighbours with a cap of 6: the start and its 6 existing neighbours exceed
    # it, as the walk without a page says; with one neighbour missing they do not
    edges = [("hub", "p", f"a{i}") for i in range(6)]
    nodes = {"hub"} | {f"a{i}" for i in range(6)}
    for missing, want in (set(), True), ({"a5"}, False):
        graph, _ = graph_of(edges, nodes, missing)
        graph.max_visited = 6
        walked = await graph.walk(T, "hub", "both", None, 1)
        listed = await graph.relations(
            T, "hub", direction="both", predicate=None, depth=1, limit=100, cursor=None
        )
        assert walked.truncated is want and listed["truncated"] is want


@pytest.mark.parametrize("hubbed", [False, True])
@pytest.mark.parametrize("seed", range(60))
async def test_pages_read_in_order_are_the_whole_walk(seed: int, hubbed: bool) -> None:
    # random graphs with many rows sharing a predicate and far end, some ends missing, some
    # rows superseded: any page size pages through exactly the whole walk's edges, in order;
    # so it does with some nodes of each end known as hubs (a large frontier reads them alone)
    rnd = random.Random(seed)
    names = sorted(f"n{i:02d}" for i in range(rnd.randint(3, 25)))
    edges = [
        (rnd.choice(names), rnd.choice(["a", "b", "c"]), rnd.choice(names))
        for _ in range(rnd.randint(1, 90))
    ]
    missing = {n for n in names[1:] if rnd.random() < 0.15}
    graph, rows = graph_of(edges, set(names), missing)
    for row in rows.rows.values():
        if rnd.random() < 0.1:
            row["status"] = "superseded"
    if hubbed:
        for end in ("subject", "object"):
            known = {n: HUB for n in names if rnd.random() < 0.3}
            graph.hubs.note(T, end, known, whole=False)
    directions: list[Direction] = ["out", "in", "both"]
    direction = rnd.choice(directions)
    predicate = rnd.choice([None, None, "a"])
    depth = rnd.randint(1, 3)
    limit = rnd.randint(1, 12)
    whole = await graph.walk(T, names[0], direction, predicate, depth)
    want = [(e.depth, e.via, str(e.row["relation_id"])) for e in page(whole.edges, None, 10**6)]
    got: list[tuple[int, str, str]] = []
    cursor = None
    for _ in range(len(want) + 2):
        listed = await graph.relations(
            T,
            names[0],
            direction=direction,
            predicate=predicate,
            depth=depth,
            limit=limit,
            cursor=cursor,
        )
        got += [(r["depth"], r["from"], r["relation_id"]) for r in listed["relations"]]
        assert all(r["resolved"] is (r["to"] in set(names) - missing) for r in listed["relations"])
        cursor = listed["next_cursor"]
        if cursor is None:
            break
    assert got == want
