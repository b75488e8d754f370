"""Hybrid knowledge search over the real broker and database: an SKU or an entity id finds its
fact and section first where dense vectors rank a near miss first; lexical search off is refused
at the door, and a collection of another lexical encoder at start-up."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pymongo import MongoClient

from engram_vectors.lexical import LEXICAL_ENCODER
from tests.conftest import Infra
from tests.integration.enrichment.helpers import send
from tests.support.internal import internal_headers
from tests.support.polling import until_async
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant
from tests.unit.enrichment.scenario import upserted

CARRIERS = range(176, 201)
"""25 carriers: two facts and two sections each fill the largest answer (100)."""
DIMENSION = "64"
"""The hashing embedder at 64 dimensions ranks SKU-4587 above SKU-4585 for the query SKU-4585."""


def sku(n: int) -> str:
    return f"SKU-{4400 + n}"


async def test_an_sku_and_an_entity_id_come_first_in_hybrid_and_lexical_mode(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], tmp_path: Path
) -> None:
    embedding = service(
        "embedding",
        ENGRAM_EMBEDDING_EMBEDDER="hashing",
        ENGRAM_EMBEDDING_HASHING_DIMENSION=DIMENSION,
    )
    vectors = str(tmp_path / "vectors")
    env = {
        "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
        "ENGRAM_ENRICHMENT_HASHING_DIMENSION": DIMENSION,
    }
    enrichment = service("enrichment", ENGRAM_ENRICHMENT_VECTOR_PATH=vectors, **env)
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
            upserted(
                f"rec_{n}",
                1,
                {"sku": sku(n), "hq": "Berlin"},
                tenant=tenant,
                entity_id=f"carrier:c{n}",
            )
            for n in CARRIERS
        ],
    )
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}
    ) as api:

        async def search(query: str, **body: Any) -> dict[str, Any]:
            response = await api.post("/v1/knowledge/search", json={"query": query, **body})
            assert response.status_code == 200, response.text
            return dict(response.json())

        await until_async(
            lambda: search("Berlin", min_score=-1, top_k=100),
            "every carrier's four hits searchable",
            90,
            0.25,
            ready=lambda body: len(body["results"]) == 4 * len(CARRIERS),
        )
        dense = await search(sku(185), mode="dense", min_score=-1, top_k=10)
        assert dense["mode"] == "dense"
        first_fact = next(r for r in dense["results"] if r["kind"] == "fact")
        assert first_fact["value"] == sku(187), "dense vectors rank a near miss first"

        for mode in ("hybrid", "lexical"):
            found = await search(sku(185), mode=mode, top_k=5)
            assert found["mode"] == mode
            top, second = found["results"][:2]
            assert (top["kind"], top["entity_id"], top["value"]) == (
                "fact",
                "carrier:c185",
                sku(185),
            ), mode
            assert (
                second["kind"] == "article_section" and second["section_id"] == "carrier:c185@sku"
            )
            for hit in (top, second):
                assert set(hit["scores"]) == {"dense", "lexical", "fused"}
                assert hit["scores"]["lexical"] > 0 and hit["score"] == hit["scores"]["dense"]
                assert hit["status"] == "active" and hit["support"][0]["record_id"] == "rec_185"

            named = await search("carrier:c185", mode=mode, top_k=4)
            assert {r["entity_id"] for r in named["results"]} == {"carrier:c185"}, mode
            assert (
                sorted(r["kind"] for r in named["results"])
                == ["article_section"] * 2 + ["fact"] * 2
            )

        default = await search(sku(185))
        assert default["mode"] == "hybrid" and default["results"][0]["value"] == sku(185)
        for refused in ({"mode": "sparse"}, {"alpha": 0.5}):
            answer = await api.post("/v1/knowledge/search", json={"query": "x", **refused})
            assert answer.status_code == 422, refused

    plain = service(
        "enrichment",
        ENGRAM_ENRICHMENT_VECTOR_PATH=str(tmp_path / "plain"),
        ENGRAM_ENRICHMENT_LEXICAL="false",
        **env,
    )
    async with httpx.AsyncClient(base_url=plain.url, headers=internal_headers(tenant)) as internal:
        off = await internal.post(
            "/internal/v1/knowledge/search", json={"query": sku(185), "mode": "lexical"}
        )
        assert off.status_code == 409 and off.json()["type"].endswith("/lexical-disabled")
    plain.stop()

    enrichment.stop()
    mismatched = service(
        "enrichment",
        start=False,
        ENGRAM_ENRICHMENT_VECTOR_PATH=vectors,
        ENGRAM_ENRICHMENT_LEXICAL="false",
        **env,
    )
    with pytest.raises(RuntimeError) as refused_at_start:
        mismatched.start()
    reason = str(refused_at_start.value)
    assert f"holds lexical vectors of encoder {LEXICAL_ENCODER!r}" in reason
    assert "ENGRAM_ENRICHMENT_COLLECTION" in reason
    logged = "".join(s.logs() for s in (enrichment, gateway, embedding))
    assert sku(185) not in logged, "queries and values stay out of logs"
    assert not re.search(r"(?<!\d)4585(?!\d)", logged), "not even the number alone"
