"""The entity store's batch write on the real server: versioned, and honest about conflicts."""

from __future__ import annotations

from typing import Any

from engram_enrichment.adapters.store import ENTITIES, MongoEntityStore
from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.stored import to_document


def _entity(entity_id: str, version: int, name: str) -> dict[str, Any]:
    return {"entity_id": entity_id, "entity_type": "carrier", "version": version, "name": name}


async def test_a_batch_writes_every_current_version_and_names_the_entities_that_moved(
    mongo_db: Any,
) -> None:
    store = MongoEntityStore(mongo_db)
    ids = [f"carrier:c{i}" for i in range(150)]
    assert await store.save_many("tnt_a", [(_entity(e, 1, "first"), 0) for e in ids]) == set()
    moved = {"carrier:c7", "carrier:c99"}
    await store.save_many("tnt_a", [(_entity(e, 2, "elsewhere"), 1) for e in sorted(moved)])

    conflicts = await store.save_many("tnt_a", [(_entity(e, 2, "second"), 1) for e in ids])

    stored = await store.load_many("tnt_a", ids)
    assert conflicts == moved
    assert {e for e in ids if stored[e]["name"] == "second"} == set(ids) - moved
    assert all(stored[e]["name"] == "elsewhere" and stored[e]["version"] == 2 for e in moved)
    assert await store.save_many("tnt_b", [(_entity("carrier:c1", 2, "x"), 1)]) == {"carrier:c1"}
    assert (await store.load_many("tnt_a", ["carrier:c1"]))["carrier:c1"]["name"] == "second"


async def test_contradiction_listings_are_upserted_in_one_write(mongo_db: Any) -> None:
    store = MongoEntityStore(mongo_db)
    docs = [
        {"contradiction_id": f"ctr_{i}", "status": "open", "entity_id": "e"} for i in range(120)
    ]
    await store.index_contradictions("tnt_a", docs)
    await store.index_contradictions("tnt_a", [{**docs[0], "status": "resolved"}])

    opened = await store.list_contradictions("tnt_a", status="open", limit=500)
    resolved = await store.list_contradictions("tnt_a", status="resolved", limit=500)
    assert len(opened) == 119 and [c["contradiction_id"] for c in resolved] == ["ctr_0"]


def _document(entity_id: str, article: str) -> dict[str, Any]:
    entity = Entity(tenant_id="tnt_a", entity_id=entity_id, entity_type="carrier", version=1)
    entity.article = article
    return to_document(entity)


async def test_a_read_back_names_what_the_database_does_not_hold_as_sent(mongo_db: Any) -> None:
    store = MongoEntityStore(mongo_db)
    intended = {
        e: _document(e, f"# {e}") for e in ("carrier:kept", "carrier:moved", "carrier:gone")
    }
    assert await store.save_many("tnt_a", [(doc, 0) for doc in intended.values()]) == set()
    other = MongoEntityStore(mongo_db)
    other_doc = _document("carrier:moved", "# someone else")
    assert await other.save_many("tnt_a", [(other_doc, 1)]) == set()
    await mongo_db[ENTITIES].delete_one({"_id": "tnt_a:carrier:gone"})

    missing = await store.unconfirmed_many("tnt_a", intended)

    assert missing["carrier:kept"] == []
    assert missing["carrier:gone"] == ["entity"]
    assert missing["carrier:moved"] == ["article"]
    restarted = MongoEntityStore(mongo_db)
    kept = {"carrier:kept": intended["carrier:kept"]}
    assert await restarted.unconfirmed_many("tnt_a", kept) == {"carrier:kept": []}
    assert await restarted.unconfirmed_many("tnt_b", kept) == {"carrier:kept": ["entity"]}
