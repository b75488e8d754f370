"""A knowledge store written with MiniLM's wheel file keeps answering after enrichment and the
embedding service restart on today's default (the quantized file): search reads it in its own
space, and a fact that changes afterwards lands there too, embedded again by enrichment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from engram_embedders import MiniLMEmbedder
from engram_events.ids import Scalar
from tests.conftest import Infra
from tests.integration.enrichment.helpers import send
from tests.integration.ops.support import create_ops_tenant
from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.tenants import tenant_of
from tests.unit.enrichment.scenario import upserted


def files(file: str) -> dict[str, str]:
    return {"ENGRAM_EMBEDDING_MINILM_FILE": file, "ENGRAM_ENRICHMENT_MINILM_FILE": file}


def found(client: httpx.Client, query: str, entity_id: str) -> dict[str, Any] | None:
    """The entity's first hit for the query, or None while it is not searchable."""
    answer = client.post("/v1/knowledge/search", json={"query": query, "top_k": 10})
    if answer.status_code != 200:
        return None
    hits = [r for r in answer.json()["results"] if r.get("entity_id") == entity_id]
    return hits[0] if hits else None


async def test_a_knowledge_store_of_the_wheels_file_answers_after_the_default_file_changed(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], tmp_path: Path
) -> None:
    wheel = MiniLMEmbedder(file="wheel").provenance.fingerprint
    embedding = service("embedding", ENGRAM_EMBEDDING_EMBEDDER="minilm", **files("wheel"))
    enrichment = service(
        "enrichment",
        ENGRAM_ENRICHMENT_EMBEDDER="minilm",
        ENGRAM_ENRICHMENT_VECTOR_PATH=str(tmp_path / "vectors"),
        **files("wheel"),
    )
    gateway = service(
        "gateway",
        ENGRAM_GATEWAY_ENRICHMENT_URL=enrichment.url,
        ENGRAM_GATEWAY_MEMORY_URL="http://127.0.0.1:9",
    )
    key = create_ops_tenant(gateway.env, f"upgraders-{tmp_path.name[-8:]}")
    tenant = tenant_of(gateway.env, key)
    harbour: dict[str, Scalar] = {"hq": "Harbourtown", "fleet": 12}
    await send(infra, names, [upserted("rec_1", 1, harbour, tenant=tenant, entity_id="carrier:c1")])
    with httpx.Client(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        first = until(
            lambda: found(client, "carrier hq Harbourtown", "carrier:c1"), "the fact", 90, 0.25
        )
        assert first["provenance"]["fingerprint"] == wheel

        for process in (embedding, enrichment):
            process.stop()
        for process in (embedding, enrichment):
            process.start(files("quantized"))
        again = until(
            lambda: found(client, "carrier hq Harbourtown", "carrier:c1"),
            "search through the restarted services",
            60,
            0.2,
        )
        assert again["provenance"]["fingerprint"] == wheel, "the old store answers, not a 409"

        ferry: dict[str, Scalar] = {"hq": "Ferryport", "fleet": 3}
        await send(
            infra, names, [upserted("rec_2", 1, ferry, tenant=tenant, entity_id="carrier:c2")]
        )
        later = until(
            lambda: found(client, "carrier hq Ferryport", "carrier:c2"), "the new fact", 90, 0.25
        )
        assert later["provenance"]["fingerprint"] == wheel, "embedded again in the store's space"
