"""Producing record events and watching enrichment's state, for the enrichment integration tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from engram_events import Envelope, encode
from tests.conftest import Infra
from tests.support.internal import internal_headers
from tests.support.kafka import produce
from tests.support.services import ServiceProcess


def topic(names: dict[str, str], base: str) -> str:
    return f"{names['ENGRAM_TOPIC_PREFIX']}{base}"


async def send(infra: Infra, names: dict[str, str], events: list[Envelope[Any]]) -> None:
    """Publish record events keyed by record id, as extraction does."""
    for event in events:
        await produce(
            infra.bootstrap,
            topic(names, "engram.record-events.v1"),
            [encode(event)],
            key=event.payload.record_id.encode(),
        )


async def entity(
    client: httpx.AsyncClient, tenant: str, entity_id: str, **params: str
) -> dict[str, Any] | None:
    """The internal entity view, or None while enrichment has not seen it."""
    response = await client.get(
        f"/internal/v1/knowledge/entities/{entity_id}",
        headers=internal_headers(tenant),
        params=params,
    )
    return response.json() if response.status_code == 200 else None


def start_enrichment(
    service: Callable[..., ServiceProcess], tmp_path: Path, **extra: str
) -> ServiceProcess:
    """Enrichment with the deterministic hashing embedder and its own vector directory."""
    return service(
        "enrichment",
        ENGRAM_ENRICHMENT_EMBEDDER="hashing",
        ENGRAM_ENRICHMENT_VECTOR_PATH=str(tmp_path / "vectors"),
        **extra,
    )
