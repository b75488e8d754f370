"""The relations collection's writes on the real server: new rows inserted, stored ones
replaced, each row ending as the last put wrote it."""

from __future__ import annotations

from typing import Any

from engram_enrichment.adapters.relations import RELATIONS, MongoRelationRows


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
