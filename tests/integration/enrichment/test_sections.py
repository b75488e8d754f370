"""Article sections over the real broker and database: embedded, found, and re-embedded on prune."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from pymongo import MongoClient

from tests.conftest import Infra
from tests.integration.enrichment.helpers import (
    entity,
    send,
    start_enrichment,
    topic,
)
from tests.support.internal import internal_headers
from tests.support.kafka import wait_for
from tests.support.polling import until_async
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant
from tests.unit.enrichment.scenario import tombstoned as tombstone_event
from tests.unit.enrichment.scenario import upserted

HQ = "carrier:c1@hq"
QUERY = "hq Berlin Munich"
"""No identifier in it: the floor alone decides (an exact identifier match would be kept)."""


def _hq(body: dict[str, Any]) -> dict[str, Any] | None:
    """The hq section hit, once its vector is of the text it shows now."""
    for hit in body.get("results", []):
        if hit.get("kind") == "article_section" and hit["section_id"] == HQ:
            return hit if hit["embedded_text_sha256"] == hit["text_sha256"] else None
    return None


async def test_a_section_hit_is_returned_and_replaced_after_its_record_is_tombstoned(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], tmp_path: Path
) -> None:
    service("embedding", ENGRAM_EMBEDDING_EMBEDDER="hashing")
    enrichment = start_enrichment(service, tmp_path)
    gateway = service("gateway", ENGRAM_GATEWAY_ENRICHMENT_URL=enrichment.url)
    name = f"acme-{uuid.uuid4().hex[:8]}"
    key = create_tenant(gateway.env, name)
    db = MongoClient[dict[str, Any]](infra.mongodb_uri)[f"{names['ENGRAM_DATABASE_PREFIX']}gateway"]
    row = db.tenants.find_one({"name": name})
    assert row is not None
    tenant = str(row["_id"])
    await send(
        infra,
        names,
        [
            upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}, tenant=tenant),
            upserted("rec_b", 1, {"hq": "Munich"}, minute=1, tenant=tenant),
        ],
    )
    async with (
        httpx.AsyncClient(base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}) as api,
        httpx.AsyncClient(base_url=enrichment.url, headers=internal_headers(tenant)) as internal,
    ):

        async def search(**body: Any) -> dict[str, Any]:
            response = await api.post("/v1/knowledge/search", json={"query": QUERY, **body})
            return dict(response.json())

        async def hq_with(record: str, present: bool) -> dict[str, Any]:
            found = await until_async(
                lambda: search(min_score=-1, top_k=20),
                f"the section to {'cite' if present else 'drop'} {record}",
                60,
                0.25,
                ready=lambda b: (
                    (hit := _hq(b)) is not None and (f"`{record}`" in hit["markdown"]) == present
                ),
            )
            hit = _hq(found)
            assert hit is not None
            return hit

        before = await hq_with("rec_b", True)
        assert before["entity_id"] == "carrier:c1" and before["contested"]
        assert sorted((f["value"], f["status"]) for f in before["facts"]) == [
            ("Berlin", "contested"),
            ("Munich", "contested"),
        ]
        assert sorted(s["record_id"] for s in before["support"]) == ["rec_a", "rec_b"]
        assert before["provenance"]["model_id"].startswith("engram-hashing-v1")
        floored = await search(min_score=before["score"] + 0.001, top_k=20)
        assert all(h["score"] >= floored["floor"] for h in floored["results"])
        assert floored["dropped_below_floor"] >= 1
        assert not any(h.get("section_id") == HQ for h in floored["results"])
        cited = await internal.post("/internal/v1/prune/verify", json={"records": ["rec_b"]})
        assert cited.json()["references"] == {
            "records": 1,
            "facts": 0,
            "relations": 0,
            "article_sections": 1,
            "section_vectors": 1,
            "passages": 0,
            "passage_vectors": 0,
        }, "before its tombstone, the record's fact, section and section vector are counted"

        tomb = tombstone_event("rec_b", prune_job_id="job_s").model_copy(
            update={"tenant_id": tenant}
        )
        await send(infra, names, [tomb])
        (ack,) = await wait_for(
            infra.bootstrap,
            topic(names, "engram.tombstones.v1"),
            lambda m: m.get("event_type") == "tombstone.applied",
        )
        verified = await internal.post(
            "/internal/v1/prune/verify",
            json={"records": ["rec_b"], "facts": ack["payload"]["tombstoned_ids"]},
        )
        assert verified.json()["references"] == {
            "records": 0,
            "facts": 0,
            "relations": 0,
            "article_sections": 0,
            "section_vectors": 0,
            "passages": 0,
            "passage_vectors": 0,
        }

        after = await hq_with("rec_b", False)
        assert after["text_sha256"] != before["text_sha256"], "the vector was replaced"
        assert [(f["value"], f["status"]) for f in after["facts"]] == [("Berlin", "active")]
        assert [s["record_id"] for s in after["support"]] == ["rec_a"]
        view = await entity(internal, tenant, "carrier:c1")
        assert view is not None and "rec_b" not in view["article"]
        (section,) = [s for s in view["sections"] if s["section_id"] == HQ]
        assert section["record_ids"] == ["rec_a"]
