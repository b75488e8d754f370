"""A knowledge reindex over the real broker and database: facts, sections and passages move
from hashing-384 to hashing-128 while search keeps answering from the old collection, a record
stored during the move and an enrichment restart mid-move are carried over, and after the
switch search reads the new space only (and still after another restart)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from engram_events import Envelope, encode, new_event
from engram_events.catalog import PASSAGE_UPSERTED
from engram_events.payloads.passages import PassageUpserted
from tests.conftest import Infra
from tests.integration.enrichment.helpers import send, start_enrichment, topic
from tests.support.kafka import produce
from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.tenants import tenant_of
from tests.unit.enrichment.scenario import upserted

CARRIERS = 8
PASSAGES = 4
EXPECTED = CARRIERS * 2 * 2 + PASSAGES
"""Two facts and two sections per carrier, and the passages."""
BODY = {"query": "carrier hq", "top_k": 100, "min_score": -1.0}


def ops_key(gateway: ServiceProcess, name: str) -> str:
    """A tenant key with the ops role, which also searches its own tenant's knowledge."""
    out = subprocess.run(
        [sys.executable, "-m", "engram_gateway", "create-tenant", name, "--ops"],
        env={**os.environ, **gateway.env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip().splitlines()[-1]


def passage(tenant: str, n: int) -> Envelope[Any]:
    text = f"Section {n}: the harbour office opens at {7 + n} o'clock."
    payload = PassageUpserted(
        passage_id=f"psg_{n}",
        document_id="doc_harbour",
        version="v1",
        name="harbour.md",
        ordinal=n,
        heading_path=["Harbour"],
        start=n * 100,
        end=n * 100 + len(text),
        text=text,
        text_sha256=hashlib.sha256(text.encode()).hexdigest(),
    )
    return new_event(PASSAGE_UPSERTED, payload, tenant_id=tenant)


def search(client: httpx.Client, body: dict[str, Any] = BODY) -> list[dict[str, Any]]:
    """Search must answer, and never empty."""
    answer = client.post("/v1/knowledge/search", json=body)
    assert answer.status_code == 200, answer.text
    results: list[dict[str, Any]] = answer.json()["results"]
    assert results, "an empty answer"
    return results


def progress(client: httpx.Client) -> dict[str, Any]:
    answer = client.get("/v1/ops/reindex")
    assert answer.status_code == 200, answer.text
    knowledge: dict[str, Any] = answer.json()["stores"]["knowledge"]
    return knowledge


def answers(client: httpx.Client) -> bool:
    return client.post("/v1/knowledge/search", json=BODY).status_code == 200


def dimensions(results: list[dict[str, Any]]) -> set[int]:
    return {int(r["provenance"]["dimension"]) for r in results}


async def test_a_knowledge_reindex_moves_search_to_the_new_space_without_a_gap(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], tmp_path: Path
) -> None:
    service("embedding", ENGRAM_EMBEDDING_EMBEDDER="hashing")
    enrichment = start_enrichment(
        service,
        tmp_path,
        ENGRAM_ENRICHMENT_REINDEX_PAGE_SIZE="2",
        ENGRAM_ENRICHMENT_REINDEX_PAUSE_SECONDS="0.3",
    )
    gateway = service(
        "gateway",
        ENGRAM_GATEWAY_ENRICHMENT_URL=enrichment.url,
        ENGRAM_GATEWAY_MEMORY_URL="http://127.0.0.1:9",
    )
    key = ops_key(gateway, f"movers-{tmp_path.name[-8:]}")
    tenant = tenant_of(gateway.env, key)
    await send(
        infra,
        names,
        [
            upserted(
                f"rec_{n}",
                1,
                {"hq": f"City{n}", "fleet": n},
                tenant=tenant,
                entity_id=f"carrier:c{n}",
            )
            for n in range(CARRIERS)
        ],
    )
    passages = [passage(tenant, n) for n in range(PASSAGES)]
    await produce(
        infra.bootstrap,
        topic(names, "engram.record-events.v1"),
        [encode(e) for e in passages],
        key=b"doc_harbour",
    )
    with httpx.Client(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        before = until(
            lambda: client.post("/v1/knowledge/search", json=BODY).json().get("results", []),
            "every fact, section and passage embedded",
            90,
            0.25,
            ready=lambda results: len(results) == EXPECTED,
        )
        assert dimensions(before) == {384}
        assert progress(client)["state"] == "none"

        refused = client.post(
            "/v1/ops/reindex", json={"embedder": "hashing", "stores": ["knowledge"]}
        )
        assert refused.status_code == 409, "hashing-384 is the space already in use"
        target = {"embedder": "hashing", "hashing_dimension": 128, "stores": ["knowledge"]}
        started = client.post("/v1/ops/reindex", json=target)
        assert started.status_code == 202, started.text
        assert started.json()["stores"]["knowledge"]["total"] == EXPECTED
        assert (
            client.post("/v1/ops/reindex", json={**target, "hashing_dimension": 96}).status_code
            == 409
        )

        await send(
            infra,
            names,
            [
                upserted(
                    "rec_new", 1, {"hq": "Lighthousetown"}, tenant=tenant, entity_id="carrier:new"
                )
            ],
        )
        until(lambda: progress(client)["done"] >= 4, "a part of the walk", 60, 0.1)
        assert dimensions(search(client)) == {384}, "search reads the old space during the move"

        enrichment.stop()
        enrichment.start()
        assert progress(client)["state"] == "running", "a restart resumes the move"
        until(lambda: answers(client), "search through the restarted service", 30, 0.2)

        searched = 0
        while (state := progress(client))["state"] == "running":
            assert dimensions(search(client)) == {384}
            searched += 1
            time.sleep(0.05)
        assert state["state"] == "done", state
        assert state["rate"] > 0 and state["eta_seconds"] is None
        assert searched > 0

        after = search(client)
        assert dimensions(after) == {128}
        entities = {r.get("entity_id") for r in before} | {"carrier:new"}
        assert {r.get("entity_id") for r in after} == entities
        assert sorted(r["kind"] for r in after) == sorted(
            [r["kind"] for r in before] + ["fact", "article_section"]
        )
        found = search(client, {"query": "carrier:new hq: Lighthousetown", "top_k": 1})
        assert found[0]["entity_id"] == "carrier:new"

        await send(
            infra,
            names,
            [
                upserted(
                    "rec_later", 1, {"hq": "Ferryport"}, tenant=tenant, entity_id="carrier:later"
                )
            ],
        )
        later = until(
            lambda: client.post(
                "/v1/knowledge/search",
                json={"query": "carrier:later hq: Ferryport", "top_k": 1, "min_score": -1.0},
            ).json()["results"],
            "a record after the switch, embedded in the new space",
            60,
            0.25,
            ready=lambda results: bool(results) and results[0]["entity_id"] == "carrier:later",
        )
        assert dimensions(later) == {128}

        enrichment.stop()
        enrichment.start()
        until(lambda: answers(client), "search through the restarted service", 30, 0.2)
        assert progress(client)["state"] == "done"
        assert dimensions(search(client)) == {128}, "the switch outlives a restart"
