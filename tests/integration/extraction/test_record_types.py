"""A tenant declares its record types through the gateway: a change keys and checks the
documents extracted after it, not those before; retiring it restores the bundled type; bad
definitions are 422s naming the field; only admins change types; tenants do not share them."""

from __future__ import annotations

from typing import Any

import httpx

from tests.integration.extraction.conftest import Pipeline
from tests.support.tenants import create_tenant

TYPES = "/v1/schema/types"
HEADER = "type,email,phone\n"


def extracted(doc: dict[str, Any]) -> bool:
    return doc.get("status") == "extracted"


async def entities_of(pipeline: Pipeline, name: str, rows: str) -> dict[str, dict[str, Any]]:
    """Upload `rows` as a CSV, wait for it, and return its records by entity id."""
    accepted = await pipeline.submit(name, HEADER + rows)
    await pipeline.document_when(accepted["document_id"], extracted)
    records = await pipeline.records(document_id=accepted["document_id"])
    return {r["entity_id"]: r for r in records}


async def test_a_tenant_type_governs_documents_extracted_after_it(pipeline: Pipeline) -> None:
    api = pipeline.client
    before = await entities_of(pipeline, "before.csv", "example_contact,a@x.io,111\n")
    assert set(before) == {"example_contact:a@x.io"}
    listed = (await api.get(TYPES)).json()["types"]
    assert [(t["name"], t["origin"]) for t in listed] == [("example_contact", "bundled")]

    bad = await api.put(f"{TYPES}/example_contact", json={"id_fields": ["phone"], "colour": 1})
    assert bad.status_code == 422 and bad.headers["content-type"] == "application/problem+json"
    assert [e["loc"] for e in bad.json()["errors"]] == [["colour"]]
    bad = await api.put(f"{TYPES}/example_contact", json={"id_fields": ["phone"]})
    assert [e["loc"] for e in bad.json()["errors"]] == [["id_fields", "0"]]
    bad = await api.put(f"{TYPES}/example_contact", json={"name": "contact"})
    assert [e["loc"] for e in bad.json()["errors"]] == [["name"]]

    declared = {"id_fields": ["phone"], "required_fields": ["phone"], "single_valued": ["email"]}
    put = await api.put(f"{TYPES}/example_contact", json=declared)
    assert put.status_code == 200, put.text
    assert (put.json()["origin"], put.json()["version"]) == ("tenant", 1)

    after = await entities_of(
        pipeline, "after.csv", "example_contact,b@x.io,222\nexample_contact,c@x.io,\n"
    )
    assert set(after) == {"example_contact:222"}
    shown = after["example_contact:222"]["lineage"]["type_definition"]
    assert shown == {"origin": "tenant", "version": 1}
    again = await pipeline.records(
        document_id=next(iter(before.values()))["lineage"]["document_id"]
    )
    assert [r["entity_id"] for r in again] == ["example_contact:a@x.io"]
    assert again[0]["lineage"]["type_definition"] == {"origin": "bundled", "version": 1}

    other = httpx.AsyncClient(
        base_url=pipeline.gateway.url,
        headers={"Authorization": f"Bearer {create_tenant(pipeline.gateway.env, 'other')}"},
        timeout=30.0,
    )
    async with other:
        theirs = Pipeline(pipeline.ingest, pipeline.extraction, pipeline.gateway, other)
        seen = await entities_of(
            theirs, "after.csv", "example_contact,b@x.io,222\nexample_contact,c@x.io,\n"
        )
        assert set(seen) == {"example_contact:b@x.io", "example_contact:c@x.io"}
        assert (await other.get(f"{TYPES}/example_contact")).json()["origin"] == "bundled"
        assert (await other.get(f"{TYPES}/example_contact/versions")).json()["versions"] == []

    made = await api.post("/v1/keys", json={"role": "default"})
    assert made.status_code == 201, made.text
    plain = {"Authorization": f"Bearer {made.json()['key']}"}
    refused = await api.put(f"{TYPES}/example_contact", json=declared, headers=plain)
    assert refused.status_code == 403
    assert (await api.delete(f"{TYPES}/example_contact", headers=plain)).status_code == 403
    assert (await api.get(f"{TYPES}/example_contact", headers=plain)).status_code == 200

    gone = await api.delete(f"{TYPES}/example_contact")
    assert gone.status_code == 200 and gone.json()["version"] == 2 and gone.json()["retired"]
    assert (await api.delete(f"{TYPES}/example_contact")).status_code == 404
    restored = await entities_of(pipeline, "restored.csv", "example_contact,d@x.io,444\n")
    assert set(restored) == {"example_contact:d@x.io"}
    versions = (await api.get(f"{TYPES}/example_contact/versions")).json()["versions"]
    assert [(v["version"], v["retired"]) for v in versions] == [(1, False), (2, True)]
    first = await api.get(f"{TYPES}/example_contact", params={"version": 1})
    assert first.json()["definition"]["id_fields"] == ["phone"]
    typo = await api.get(f"{TYPES}/example_contact", params={"versoin": 1})
    assert typo.status_code == 422 and typo.json()["errors"][0]["loc"] == ["query", "versoin"]
