"""Knowledge search through the gateway: facts embedded by the embedding service, floored."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from pymongo import MongoClient

from tests.conftest import Infra
from tests.integration.enrichment.helpers import send, start_enrichment
from tests.support.polling import until_async
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant
from tests.unit.enrichment.scenario import upserted


async def test_search_returns_facts_with_status_and_never_below_the_floor(
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
            upserted("rec_p", 1, {"berth": "North"}, tenant=tenant, entity_id="port:p1"),
        ],
    )
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}
    ) as api:

        async def everything() -> Any:
            response = await api.post(
                "/v1/knowledge/search",
                json={"query": "hq: Berlin", "min_score": -1, "top_k": 20},
            )
            return response.json()

        raw = await until_async(
            everything,
            "seven results",
            60,
            0.25,
            ready=lambda body: len(body.get("results", [])) == 7,
        )
        kinds = sorted(r["kind"] for r in raw["results"])
        assert kinds == ["article_section"] * 3 + ["fact"] * 4, "one section per attribute"
        by_value = {r["value"]: r for r in raw["results"] if r["kind"] == "fact"}
        assert by_value["Berlin"]["contested"] and by_value["Berlin"]["status"] == "contested"
        assert [s["record_id"] for s in by_value["Munich"]["support"]] == ["rec_b"]
        assert raw["dropped_below_floor"] == 0

        scores = sorted(r["score"] for r in raw["results"])
        floor = (scores[-1] + scores[-2]) / 2
        floored = (
            await api.post(
                "/v1/knowledge/search",
                json={"query": "hq: Berlin", "min_score": floor, "top_k": 10},
            )
        ).json()
        assert floored["floor"] == floor
        assert len(floored["results"]) == 1 and floored["results"][0]["score"] == scores[-1]
        assert all(r["score"] >= floor for r in floored["results"])
        assert floored["dropped_below_floor"] == 6
        named = (
            await api.post(
                "/v1/knowledge/search",
                json={"query": "carrier:c1 hq: Berlin", "min_score": 0.99, "top_k": 10},
            )
        ).json()
        assert {r["entity_id"] for r in named["results"]} == {"carrier:c1"}
        assert len(named["results"]) == 5, "the floor keeps what names the query's entity id"

        default = (await api.post("/v1/knowledge/search", json={"query": "hq"})).json()
        assert all(r["score"] >= default["floor"] for r in default["results"])
        assert (await api.post("/v1/knowledge/search", json={"query": ""})).status_code == 422
