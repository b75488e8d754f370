"""The relations collection on the real server: new rows inserted, stored ones replaced, each
row ending as the last put wrote it; rows read in (predicate, far end) order from a keyset,
leaving out those named; listings page the same with a frontier's hubs read alone; rows
stored packed, and rows stored before packing, read whole."""

from __future__ import annotations

from typing import Any

from engram_enrichment.adapters.packing import PACKED
from engram_enrichment.adapters.relations import INDEXES, RELATIONS, MongoRelationRows
from engram_enrichment.adapters.store import ENTITIES
from engram_enrichment.domain.relations import page
from engram_enrichment.service.hubs import HUB, Hubs
from engram_enrichment.service.relations import WALKED, RelationGraph
from tests.support.relation_graph import all_pages, carrier_graph, edge_rows, nodes_of


def _row(n: int, status: str = "active") -> dict[str, Any]:
    return {
        "relation_id": f"rel_{n}",
        "subject_id": f"shipment:sh{n}",
        "predicate": "carried_by",
        "object_id": f"carrier:c{n % 7}",
        "status": status,
    }


async def test_new_rows_are_inserted_and_stored_ones_replaced(mongo_db: Any) -> None:
    rows = MongoRelationRows(mongo_db)
    await rows.put("tnt_a", [_row(n) for n in range(1500)])
    # A row another writer stored is replaced too.
    await mongo_db[RELATIONS].insert_one(
        {**_row(2000), "_id": "tnt_a:rel_2000", "tenant_id": "tnt_a", "status": "stale"}
    )

    await rows.put(
        "tnt_a",
        [_row(3, "contested"), _row(1499, "contested"), _row(2000), _row(2001), _row(3, "x")],
    )

    stored = {
        d["relation_id"]: d
        async for d in mongo_db[RELATIONS].find(
            {"tenant_id": "tnt_a"}, {"_id": 1, "status": 1, "relation_id": 1}
        )
    }
    assert len(stored) == 1502
    assert stored["rel_3"]["status"] == "x" and stored["rel_1499"]["status"] == "contested"
    assert (
        stored["rel_2000"]["status"] == "active" and stored["rel_2001"]["_id"] == "tnt_a:rel_2001"
    )
    assert stored["rel_0"]["status"] == "active"
    assert await mongo_db[RELATIONS].count_documents({"tenant_id": "tnt_b"}) == 0
    # The same relation id in another tenant is another row.
    await rows.put("tnt_b", [_row(3)])
    assert await mongo_db[RELATIONS].count_documents({"relation_id": "rel_3"}) == 2


async def test_rows_in_order_page_by_keyset_over_the_indexes(mongo_db: Any) -> None:
    # the declared indexes serve the order on this server too; each start bound, several nodes
    for model in INDEXES[RELATIONS]:
        await mongo_db[RELATIONS].create_indexes([model])
    rows = MongoRelationRows(mongo_db)
    hubs = ["carrier:c1", "carrier:c2", "supplier:s1"]
    put = [
        {
            "relation_id": f"rel_{n:03d}",
            "subject_id": f"shipment:sh{n % 40:02d}",
            "predicate": ("carried_by", "supplied_by", "lanes")[n % 3],
            "object_id": hubs[n % 3] if n % 4 else hubs[(n + 1) % 3],
            "status": "active",
        }
        for n in range(120)
    ]
    await rows.put("tnt_a", put)
    fields = ("relation_id", "subject_id", "object_id", "predicate")

    def want(start: tuple[str, str | None] | None, nodes: list[str]) -> list[tuple[str, str]]:
        keys = sorted((r["predicate"], r["subject_id"]) for r in put if r["object_id"] in nodes)
        if start is None:
            return keys
        if start[1] is None:
            return [k for k in keys if k[0] > start[0]]
        return [k for k in keys if k >= start]

    for nodes in (hubs[:1], hubs):
        for start in (None, ("carried_by", "shipment:sh17"), ("carried_by", None), ("lanes", "")):
            got = await rows.in_order("tnt_a", nodes, "object", None, start, 500, fields)
            assert [(r["predicate"], r["subject_id"]) for r in got] == want(start, nodes)
            first = await rows.in_order("tnt_a", nodes, "object", None, start, 7, fields)
            assert [(r["predicate"], r["subject_id"]) for r in first] == want(start, nodes)[:7]
    of_one = await rows.in_order("tnt_a", hubs, "object", "lanes", None, 500, fields)
    assert {r["predicate"] for r in of_one} == {"lanes"} and len(of_one) == len(
        [r for r in put if r["predicate"] == "lanes" and r["object_id"] in hubs]
    )


async def test_rows_skipped_are_left_out_before_the_limit(mongo_db: Any) -> None:
    for model in INDEXES[RELATIONS]:
        await mongo_db[RELATIONS].create_indexes([model])
    rows = MongoRelationRows(mongo_db)
    await rows.put("tnt_a", [_row(n) for n in range(70)])
    fields = ("relation_id", "subject_id", "predicate")
    every = await rows.in_order("tnt_a", ["carrier:c1"], "object", None, None, 500, fields)
    skip = [r["relation_id"] for r in every[:4]] + ["rel_unknown"]
    got = await rows.in_order("tnt_a", ["carrier:c1"], "object", None, None, 5, fields, skip)
    assert [r["relation_id"] for r in got] == [r["relation_id"] for r in every[4:9]]


async def test_listings_read_hubs_alone_on_this_server_and_page_the_same(mongo_db: Any) -> None:
    # a carrier's level-2 frontier of 15 nodes holds 3 warehouses with 100 deliveries each:
    # the pages are the whole walk's, read with the `$in` (hubs unknown) or the hubs alone
    for model in INDEXES[RELATIONS]:
        await mongo_db[RELATIONS].create_indexes([model])
    edges = carrier_graph()
    await MongoRelationRows(mongo_db).put("tnt_a", edge_rows("tnt_a", edges))
    await mongo_db[ENTITIES].insert_many(
        [
            {"_id": f"tnt_a:{n}", "tenant_id": "tnt_a", "entity_id": n, "fact_count": 1}
            for n in nodes_of(edges)
        ]
    )
    graph = RelationGraph(MongoRelationRows(mongo_db))
    walked = await graph.walk("tnt_a", "carrier:c0", "both", None, 2)
    want = [str(e.row["relation_id"]) for e in page(walked.edges, None, 10**6)]

    for known in ({}, {"warehouse:w1": HUB}):
        graph.hubs = Hubs()
        graph.hubs.note("tnt_a", "object", known, whole=False)
        for limit in (5, 16, 40):
            assert await all_pages(graph, "tnt_a", "carrier:c0", limit) == want
    assert graph.hubs.alone("tnt_a", "object", ["warehouse:w0", "warehouse:w2"]) == {
        "warehouse:w0",
        "warehouse:w2",
    }


async def test_rows_are_stored_packed_and_read_whole_old_rows_as_they_are(mongo_db: Any) -> None:
    # a listing row keeps its walked fields plain and the rest in one value; a row stored
    # before packing (every field plain) reads the same through each read
    rows = MongoRelationRows(mongo_db)
    support = [{"record_id": "rec_1", "revision": 2, "passage_ids": ["p1"], "edit": None}]
    whole = {
        **_row(1),
        "object_type": "carrier",
        "attribute": "carrier_id",
        "value": "c1",
        "support": support,
        "contradiction_id": None,
    }
    await rows.put("tnt_a", [whole])
    await mongo_db[RELATIONS].insert_one(
        {**whole, "relation_id": "rel_old", "_id": "tnt_a:rel_old", "tenant_id": "tnt_a"}
    )

    stored = await mongo_db[RELATIONS].find_one({"_id": "tnt_a:rel_1"})
    assert set(stored) == {*_row(1), "_id", "tenant_id", PACKED}
    assert await mongo_db[RELATIONS].count_documents({"support.record_id": "rec_1"}) == 1

    by_id = {r["relation_id"]: r for r in await rows.by_id("tnt_a", ["rel_1", "rel_old"])}
    assert by_id["rel_1"] == whole and by_id["rel_old"] == {**whole, "relation_id": "rel_old"}
    touching = await rows.touching("tnt_a", ["shipment:sh1"], "subject", None, 10)
    assert sorted(touching, key=lambda r: r["relation_id"]) == [
        whole,
        {**whole, "relation_id": "rel_old"},
    ]
    walked = await rows.touching("tnt_a", ["carrier:c1"], "object", None, 10, WALKED)
    assert all(set(r) == set(WALKED) for r in walked) and len(walked) == 2
    some = await rows.in_order("tnt_a", ["carrier:c1"], "object", None, None, 10, ("support",))
    assert [r["support"] for r in some] == [support, support]
    # the old row is packed when its relation is next written
    await rows.put("tnt_a", [{**whole, "relation_id": "rel_old"}])
    rewritten = await mongo_db[RELATIONS].find_one({"_id": "tnt_a:rel_old"})
    assert set(rewritten) == {*_row(1), "_id", "tenant_id", PACKED}
