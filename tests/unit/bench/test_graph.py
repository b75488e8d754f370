"""The knowledge-graph benchmark's generated graph: what its figures rest on."""

from __future__ import annotations

import pytest

from bench.graph import BATCH, ORDER, batches, generate

pytestmark = pytest.mark.unit


def test_the_graph_is_seeded_and_holds_five_relations_per_entity() -> None:
    graph = generate(5000, 42)
    assert graph.rows == generate(5000, 42).rows != generate(5000, 43).rows
    assert graph.entities == 5000 and graph.relations == 25_000
    assert {t: len(graph.rows[t]) for t in ORDER} == {
        "supplier": 100,
        "warehouse": 50,
        "carrier": 50,
        "shipment": 4800,
    }
    warehouses, carriers = set(graph.ids("warehouse")), set(graph.ids("carrier"))
    for row in graph.rows["shipment"]:
        lanes = row["lanes"].split(";")
        assert len(set(lanes)) == 2 and {f"warehouse:{w}" for w in lanes} <= warehouses
        assert f"carrier:{row['carrier_id']}" in carriers
    served = [set(row["carrier_ids"].split(";")) for row in graph.rows["warehouse"]]
    assert all(len(s) == 20 for s in served)


def test_referenced_types_are_imported_first_in_bounded_requests() -> None:
    graph = generate(12_000, 1)
    sent = list(batches(graph))
    assert [t for t, _ in sent] == sorted((t for t, _ in sent), key=ORDER.index)
    assert all(0 < len(rows) <= BATCH for _, rows in sent)
    assert sum(len(rows) for _, rows in sent) == graph.entities
