"""A running document pipeline (ingest, extraction, gateway) and a tenant's client for it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.polling import until_async
from tests.support.services import ServiceProcess, start_together
from tests.support.tenants import create_tenant


@dataclass
class Pipeline:
    """The three processes and an authenticated client on the gateway."""

    ingest: ServiceProcess
    extraction: ServiceProcess
    gateway: ServiceProcess
    client: httpx.AsyncClient

    async def submit(self, name: str, text: str, mime: str = "text/csv") -> dict[str, Any]:
        response = await self.client.post(
            "/v1/documents", json={"name": name, "mime": mime, "text": text}
        )
        assert response.status_code == 202, response.text
        body: dict[str, Any] = response.json()
        return body

    async def document_when(
        self, doc_id: str, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60.0
    ) -> dict[str, Any]:
        """Poll the document's status until the predicate holds."""

        async def status() -> dict[str, Any] | None:
            response = await self.client.get(f"/v1/documents/{doc_id}")
            return response.json() if response.status_code == 200 else None

        found: dict[str, Any] = await until_async(
            status,
            f"document {doc_id} to match",
            timeout,
            0.3,
            ready=lambda last: last is not None and predicate(last),
        )
        return found

    async def records(self, **params: str) -> list[dict[str, Any]]:
        """Every record matching the filters, following the cursor."""
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query = {**params, "limit": "200", **({"cursor": cursor} if cursor else {})}
            response = await self.client.get("/v1/records", params=query)
            assert response.status_code == 200, response.text
            page = response.json()
            out.extend(page["records"])
            cursor = page["next_cursor"]
            if not cursor:
                return out


@pytest.fixture
async def make_pipeline(
    service: Callable[..., ServiceProcess],
) -> AsyncIterator[Callable[..., Awaitable[Pipeline]]]:
    """Factory: a pipeline whose extraction process gets extra environment (e.g. an LLM)."""
    clients: list[httpx.AsyncClient] = []

    async def make(**extraction_env: str) -> Pipeline:
        ingest = service("ingest", start=False)
        extraction = service("extraction", start=False, **extraction_env)
        gateway = service(
            "gateway",
            start=False,
            ENGRAM_GATEWAY_INGEST_URL=ingest.url,
            ENGRAM_GATEWAY_EXTRACTION_URL=extraction.url,
        )
        start_together(ingest, extraction, gateway)
        key = create_tenant(gateway.env)
        client = httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30.0
        )
        clients.append(client)
        return Pipeline(ingest, extraction, gateway, client)

    yield make
    for client in clients:
        await client.aclose()


@pytest.fixture
async def pipeline(make_pipeline: Callable[..., Awaitable[Pipeline]]) -> Pipeline:
    return await make_pipeline()
