"""A graph with hubs, and every relation id of a listing page after page: for the tests that
check a listing's pages against the whole walk, in process and on the real server."""

from __future__ import annotations

from typing import Any

Edges = list[tuple[str, str, str]]
"""(subject, predicate, object) triples."""


def carrier_graph() -> Edges:
    """A carrier served by 3 warehouses and carrying 12 shipments: its level-2 frontier of 15
    nodes (more than are read node by node) holds the warehouses, each with 100 deliveries."""
    edges = [(f"shipment:s{i:02d}", "carried_by", "carrier:c0") for i in range(12)]
    edges += [(f"warehouse:w{j}", "served_by", "carrier:c0") for j in range(3)]
    edges += [(f"shipment:s{i:02d}", "delivered_to", f"warehouse:w{i % 3}") for i in range(12)]
    edges += [
        (f"shipment:t{j}_{k:03d}", "delivered_to", f"warehouse:w{j}")
        for j in range(3)
        for k in range(100)
    ]
    return edges


def nodes_of(edges: Edges) -> list[str]:
    """Every entity the edges name, sorted."""
    return sorted({e[0] for e in edges} | {e[2] for e in edges})


def edge_rows(tenant: str, edges: Edges) -> list[dict[str, Any]]:
    """The edges as active relation rows of `tenant`, ids `r00000` on in the edges' order,
    with no support."""
    return [
        {
            "tenant_id": tenant,
            "relation_id": f"r{n:05d}",
            "subject_id": subject,
            "predicate": predicate,
            "object_id": obj,
            "object_type": obj.split(":")[0],
            "attribute": predicate,
            "value": obj,
            "status": "active",
            "contradiction_id": None,
            "support": [],
        }
        for n, (subject, predicate, obj) in enumerate(edges)
    ]


async def all_pages(graph: Any, tenant: str, start: str, limit: int, depth: int = 2) -> list[str]:
    """The relation ids of `start`'s listing in both directions, following `next_cursor` until
    the last page."""
    got: list[str] = []
    cursor = None
    while True:
        found = await graph.relations(
            tenant,
            start,
            direction="both",
            predicate=None,
            depth=depth,
            limit=limit,
            cursor=cursor,
        )
        got += [r["relation_id"] for r in found["relations"]]
        cursor = found["next_cursor"]
        if cursor is None:
            return got
