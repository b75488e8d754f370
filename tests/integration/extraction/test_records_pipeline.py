"""Documents become records with lineage and revisions, over the real broker and database."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Infra
from tests.integration.extraction.conftest import Pipeline
from tests.support.kafka import read_all
from tests.support.polling import until_async

CSV = "id,name,city\nc1,Acme Freight,Paris\nc2,Beta Lines,Oslo\n"


def _topic(names: dict[str, str], base: str) -> str:
    return f"{names['ENGRAM_TOPIC_PREFIX']}{base}"


def extracted(doc: dict) -> bool:
    return doc.get("status") == "extracted"


async def test_csv_becomes_records_with_lineage_to_its_row(pipeline: Pipeline) -> None:
    accepted = await pipeline.submit("carriers.csv", CSV)
    doc = await pipeline.document_when(accepted["document_id"], extracted)
    assert doc["record_count"] == 2 and doc["rejected_count"] == 0 and doc["error"] is None

    records = await pipeline.records(document_id=accepted["document_id"])
    by_entity = {r["entity_id"]: r for r in records}
    assert set(by_entity) == {"carrier:c1", "carrier:c2"}
    c2 = (await pipeline.client.get(f"/v1/records/{by_entity['carrier:c2']['record_id']}")).json()
    assert c2["record_type"] == "carrier"
    assert c2["attributes"] == {"id": "c2", "name": "Beta Lines", "city": "Oslo"}
    assert c2["lineage"] == {
        "document_id": accepted["document_id"],
        "document_version": accepted["version"],
        "locator": "row 3",
        "source_item_id": "carriers.csv",
    }
    assert [r["revision"] for r in c2["revisions"]] == [1]
    assert (await pipeline.client.get("/v1/records/rec_nope")).status_code == 404


async def test_same_file_twice_yields_one_set_of_records(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    first = await pipeline.submit("carriers.csv", CSV)
    await pipeline.document_when(first["document_id"], extracted)
    second = await pipeline.submit("carriers.csv", CSV)
    assert second == first
    await pipeline.submit("carriers.csv", CSV)
    messages = await read_all(infra.bootstrap, _topic(names, "engram.record-events.v1"), settle=4.0)
    upserts = [m for m in messages if m and m.get("event_type") == "record.upserted"]
    assert len({m["event_id"] for m in upserts}) == 2
    records = await pipeline.records(document_id=first["document_id"])
    assert sorted(r["revision"] for r in records) == [1, 1]


async def test_a_revised_file_revises_its_records_and_keeps_history(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    first = await pipeline.submit("carriers.csv", CSV)
    await pipeline.document_when(first["document_id"], extracted)
    revised_csv = "id,name,city\nc1,Acme Freight,Paris\nc2,Beta Lines,Bergen\nc3,Gamma,Rome\n"
    second = await pipeline.submit("carriers.csv", revised_csv)
    assert second["document_id"] == first["document_id"] and second["version"] != first["version"]
    doc = await pipeline.document_when(
        first["document_id"],
        lambda d: d["latest_version"] == second["version"] and d["status"] == "extracted",
    )
    assert doc["record_count"] == 3
    records = {r["entity_id"]: r for r in await pipeline.records(type="carrier")}
    assert {k: r["revision"] for k, r in records.items()} == {
        "carrier:c1": 1,
        "carrier:c2": 2,
        "carrier:c3": 1,
    }
    c2 = (await pipeline.client.get(f"/v1/records/{records['carrier:c2']['record_id']}")).json()
    assert c2["attributes"]["city"] == "Bergen"
    history = c2["revisions"]
    assert [h["revision"] for h in history] == [1, 2]
    assert history[0]["content_sha256"] != history[1]["content_sha256"]
    assert history[0]["lineage"]["document_version"] == first["version"]
    assert "attributes" not in history[0], "history keeps hashes, not content"
    state = await read_all(infra.bootstrap, _topic(names, "engram.records.v1"), settle=2.0)
    latest = {m["payload"]["record_id"]: m["payload"] for m in state if m}
    assert latest[c2["record_id"]]["revision"] == 2


async def test_pagination_never_skips_records_with_equal_timestamps(pipeline: Pipeline) -> None:
    rows = "\n".join(f"k{i},v{i}" for i in range(230))
    accepted = await pipeline.submit("items.csv", "id,value\n" + rows + "\n")
    await pipeline.document_when(accepted["document_id"], extracted)
    seen: list[str] = []
    cursor = None
    while True:
        params = {"type": "item", "limit": "50", **({"cursor": cursor} if cursor else {})}
        page = (await pipeline.client.get("/v1/records", params=params)).json()
        seen.extend(r["entity_id"] for r in page["records"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(seen) == 230 and len(set(seen)) == 230


async def test_the_unfiltered_listing_pages_by_update_time_and_lists_a_revised_record_once(
    pipeline: Pipeline,
) -> None:
    """Walks the listing index: a revision moves a record to the end, never lists it twice."""
    rows = [f"k{i},v{i}" for i in range(120)]
    first = await pipeline.submit("items.csv", "id,value\n" + "\n".join(rows) + "\n")
    await pipeline.document_when(first["document_id"], extracted)
    rows[5], rows[77] = "k5,changed", "k77,changed"
    second = await pipeline.submit("items.csv", "id,value\n" + "\n".join(rows) + "\n")
    await pipeline.document_when(
        first["document_id"],
        lambda d: d["latest_version"] == second["version"] and d["status"] == "extracted",
    )
    seen: list[dict] = []
    cursor = None
    while True:
        params = {"limit": "25", **({"cursor": cursor} if cursor else {})}
        page = (await pipeline.client.get("/v1/records", params=params)).json()
        seen.extend(page["records"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert sorted(r["entity_id"] for r in seen) == sorted(f"item:k{i}" for i in range(120))
    keys = [(r["updated_at"], r["record_id"]) for r in seen]
    assert keys == sorted(keys)
    assert {r["entity_id"] for r in seen[-2:]} == {"item:k5", "item:k77"}
    assert [r["revision"] for r in seen[-2:]] == [2, 2]


@pytest.mark.parametrize(
    "query",
    [
        "document_id[$ne]=x",
        "document_id=a&document_id=b",
        "type=Not-A-Type",
        "cursor=%7B%22%24gt%22%3A1%7D",
    ],
)
async def test_filter_values_must_be_scalars(pipeline: Pipeline, query: str) -> None:
    response = await pipeline.client.get(f"/v1/records?{query}")
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")


async def test_structured_import_becomes_records(pipeline: Pipeline) -> None:
    body = {
        "record_type": "contact",
        "source": "crm",
        "key_field": "email",
        "rows": [{"email": "a@x.io", "name": "Ann", "age": 41}, {"name": "no key"}],
    }
    accepted = await pipeline.client.post("/v1/records:import", json=body)
    assert accepted.status_code == 202, accepted.text
    status_url = accepted.json()["status_url"]

    async def import_status() -> dict[str, Any]:
        body: dict[str, Any] = (await pipeline.client.get(status_url)).json()
        return body

    status = await until_async(
        import_status, "the import to finish", 30, 0.3, ready=lambda s: s["status"] != "pending"
    )
    assert status["status"] == "completed"
    assert status["record_count"] == 1 and status["rejected_count"] == 1
    (record,) = await pipeline.records(type="contact")
    assert record["entity_id"] == "contact:a@x.io"
    assert record["attributes"] == {"email": "a@x.io", "name": "Ann", "age": 41}
    assert record["lineage"]["locator"] == "rows[0]"

    nested = {**body, "rows": [{"email": {"$gt": ""}}]}
    refused = await pipeline.client.post("/v1/records:import", json=nested)
    assert refused.status_code == 422
    assert refused.headers["content-type"].startswith("application/problem+json")
