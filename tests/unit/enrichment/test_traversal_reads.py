"""What a listing asks the server for, beyond its answers (`test_traversal`): rows nearer levels
walked are left out by the server, a stream the page needs most is read in fewer steps, a large
frontier's hubs (known from earlier reads, or by their type) are read one by one instead of
sorted with the rest, and the rows a page shows are read whole in its order, with no second read
by id; the pages stay the whole walk's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engram_enrichment.domain.relations import page
from engram_enrichment.service.hubs import HUB, Hubs
from engram_enrichment.service.relations import RelationGraph
from tests.support.relation_graph import Edges, all_pages, carrier_graph, edge_rows, nodes_of
from tests.unit.enrichment.fakes import MemoryRelationRows, MemoryStore

pytestmark = pytest.mark.unit

T = "tnt_a"


def rows_of(edges: Edges, rows: MemoryRelationRows | None = None) -> MemoryRelationRows:
    rows = rows or MemoryRelationRows(MemoryStore())
    for node in nodes_of(edges):
        rows.store.entities[f"{T}:{node}"] = {"entity_id": node, "fact_count": 1}
    for row in edge_rows(T, edges):
        rows.rows[f"{T}:{row['relation_id']}"] = row
    return rows


async def listing(graph: RelationGraph, start: str, limit: int) -> list[str]:
    found = await graph.relations(
        T, start, direction="both", predicate=None, depth=2, limit=limit, cursor=None
    )
    return [r["relation_id"] for r in found["relations"]]


async def whole(graph: RelationGraph, start: str, limit: int) -> list[str]:
    walked = await graph.walk(T, start, "both", None, 2)
    return [str(e.row["relation_id"]) for e in page(walked.edges, None, limit)]


async def test_rows_nearer_levels_walked_are_left_out_by_the_server() -> None:
    rows = rows_of(carrier_graph())
    graph = RelationGraph(rows)
    level_one = {f"r{n:05d}" for n in range(15)}
    assert await listing(graph, "carrier:c0", 20) == await whole(graph, "carrier:c0", 20)
    later = [ids for nodes, _, _, ids in rows.ordered if nodes != ("carrier:c0",)]
    assert later and not any(level_one & set(ids) for ids in later)


async def test_hubs_learned_from_one_listing_are_read_one_by_one_in_the_next() -> None:
    rows = rows_of(carrier_graph())
    graph = RelationGraph(rows)
    want = await whole(graph, "carrier:c0", 20)
    graph.hubs = Hubs()
    rows.ordered.clear()
    assert await listing(graph, "carrier:c0", 20) == want
    sorted_before = max(m for nodes, end, m, _ in rows.ordered if len(nodes) > 1)
    assert sorted_before >= 300
    # one warehouse's own listing shows it has many rows; the others are taken for hubs by type
    await listing(graph, "warehouse:w0", 40)
    rows.ordered.clear()
    assert await listing(graph, "carrier:c0", 20) == want
    assert max(m for nodes, _, m, _ in rows.ordered if len(nodes) > 1) < HUB
    alone = {nodes[0] for nodes, end, _, _ in rows.ordered if len(nodes) == 1 and end == "object"}
    assert {"warehouse:w0", "warehouse:w1", "warehouse:w2"} <= alone


async def test_pages_with_hubs_read_alone_are_the_whole_walk() -> None:
    rows = rows_of(carrier_graph())
    graph = RelationGraph(rows)
    await listing(graph, "warehouse:w1", 40)
    want = await whole(graph, "carrier:c0", 10**6)
    for limit in (1, 7, 15, 16, 40, 333):
        got = await all_pages(graph, T, "carrier:c0", limit)
        assert got == want


def test_a_type_is_taken_for_hubs_only_while_its_hubs_outnumber_its_small_nodes() -> None:
    hubs = Hubs()
    hubs.note(T, "object", {"warehouse:w0": HUB}, whole=False)
    assert hubs.alone(T, "object", ["warehouse:w0", "warehouse:w9", "shipment:s1"]) == {
        "warehouse:w0",
        "warehouse:w9",
    }
    assert hubs.alone(T, "subject", ["warehouse:w9"]) == set()
    assert hubs.alone("tnt_b", "object", ["warehouse:w9"]) == set()
    hubs.note(T, "object", {"warehouse:w1": 3, "warehouse:w2": 0}, whole=True)
    assert hubs.alone(T, "object", ["warehouse:w0", "warehouse:w9"]) == {"warehouse:w0"}
    hubs.note(T, "object", {"warehouse:w3": 5}, whole=False)
    assert hubs.alone(T, "object", ["warehouse:w3"]) == set()


async def test_the_stream_a_page_needs_most_is_read_in_fewer_steps() -> None:
    # a shipment's level 2: its carrier's 96 other shipments come first in the page's order
    # (`carried_by`), then its warehouses' and supplier's; a node of so small a frontier starts
    # with half the page (51 rows, where an equal share was 11), and once the others' rows
    # show the carrier comes first, its stream is read on with what the page has room for: two
    # reads (11, 22, 65 rows took three; doubling alone, 11, 22, 44, 23, four)
    edges = [
        ("shipment:s", "carried_by", "carrier:c"),
        ("shipment:s", "supplied_by", "supplier:p"),
    ]
    edges += [("shipment:s", "routed_via", f"warehouse:{w}") for w in ("w", "v0", "v1")]
    edges += [(f"shipment:x{k:03d}", "carried_by", "carrier:c") for k in range(96)]
    edges += [(f"shipment:z{k:03d}", "supplied_by", "supplier:p") for k in range(48)]
    for w in ("w", "v0", "v1"):
        edges += [(f"shipment:y{k:03d}", "delivered_to", f"warehouse:{w}") for k in range(100)]
        edges += [(f"warehouse:{w}", "served_by", f"carrier:k{k:02d}") for k in range(20)]
    rows = rows_of(edges)
    graph = RelationGraph(rows)
    assert await listing(graph, "shipment:s", 100) == await whole(graph, "shipment:s", 100)
    carrier = [
        m for nodes, end, m, _ in rows.ordered if nodes == ("carrier:c",) and end == "object"
    ]
    assert len(carrier) == 2


class ByIdCounted(MemoryRelationRows):
    """Counts the rows asked for by id."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store)
        self.by_id_rows = 0

    async def by_id(self, tenant_id: str, relation_ids: Sequence[str]) -> list[dict[str, Any]]:
        self.by_id_rows += len(relation_ids)
        return await super().by_id(tenant_id, relation_ids)


async def test_a_page_shows_the_whole_rows_it_read_in_order_with_no_read_by_id() -> None:
    rows = rows_of(carrier_graph(), ByIdCounted(MemoryStore()))
    assert isinstance(rows, ByIdCounted)
    found = await RelationGraph(rows).relations(
        T, "carrier:c0", direction="both", predicate=None, depth=2, limit=20, cursor=None
    )
    assert len(found["relations"]) == 20
    assert all(r["object_type"] for r in found["relations"])
    assert rows.by_id_rows == 0
