"""A tenant's record type governs enrichment too: the attributes it declares single-valued
contradict when two sources disagree, and the others may hold several values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.integration.enrichment.helpers import start_enrichment
from tests.support.polling import until_async
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant

ENTITY = "carrier:c1"


def statuses(view: dict[str, Any], attribute: str) -> dict[Any, str]:
    return {f["value"]: f["status"] for f in view["facts"] if f["attribute"] == attribute}


async def test_the_declared_single_valued_attributes_decide_contradictions(
    service: Callable[..., ServiceProcess], tmp_path: Path
) -> None:
    ingest = service("ingest")
    extraction = service("extraction")
    enrichment = start_enrichment(service, tmp_path)
    gateway = service(
        "gateway",
        ENGRAM_GATEWAY_INGEST_URL=ingest.url,
        ENGRAM_GATEWAY_EXTRACTION_URL=extraction.url,
        ENGRAM_GATEWAY_ENRICHMENT_URL=enrichment.url,
    )
    headers = {"Authorization": f"Bearer {create_tenant(gateway.env)}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=30.0) as api:
        declared = {"id_fields": ["id"], "required_fields": ["id"], "single_valued": ["hq"]}
        put = await api.put("/v1/schema/types/carrier", json=declared)
        assert put.status_code == 200, put.text
        for name, row in (
            ("first.csv", "c1,Acme,Berlin,air"),
            ("second.csv", "c1,Acme,Munich,sea"),
        ):
            body = {
                "name": name,
                "mime": "text/csv",
                "text": f"type,id,name,hq,lane\ncarrier,{row}\n",
            }
            assert (await api.post("/v1/documents", json=body)).status_code == 202

        async def fetch() -> dict[str, Any] | None:
            response = await api.get(f"/v1/knowledge/entities/{ENTITY}")
            return response.json() if response.status_code == 200 else None

        view = await until_async(
            fetch,
            "both sources' facts",
            60,
            0.25,
            ready=lambda v: (
                v is not None and len(statuses(v, "lane")) == 2 and len(statuses(v, "hq")) == 2
            ),
        )
    assert statuses(view, "hq") == {"Berlin": "contested", "Munich": "contested"}
    assert statuses(view, "lane") == {"air": "active", "sea": "active"}
