"""Issue 43's human knowledge edits over the real broker and database: a curator's value shows in
the article with its provenance and survives the document's next version; a curator's withdrawal
of a value the document asserts opens a contradiction, and pruning the withdrawal's record ends
it; other keys are refused."""

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
FACTS = f"/v1/knowledge/entities/{ENTITY}/facts"


async def upload(api: httpx.AsyncClient, text: str) -> None:
    body = {"name": "carriers.csv", "mime": "text/csv", "text": text}
    response = await api.post("/v1/documents", json=body)
    assert response.status_code == 202, response.text


async def entity_when(
    api: httpx.AsyncClient, what: str, ready: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    async def fetch() -> dict[str, Any] | None:
        response = await api.get(f"/v1/knowledge/entities/{ENTITY}")
        return response.json() if response.status_code == 200 else None

    found = await until_async(fetch, what, 30, 0.25, ready=lambda v: v is not None and ready(v))
    return dict(found)


def fact(view: dict[str, Any], attribute: str, value: Any) -> dict[str, Any] | None:
    return next(
        (f for f in view["facts"] if f["attribute"] == attribute and f["value"] == value), None
    )


def by_curator(found: dict[str, Any] | None, key_id: str, field: str = "support") -> bool:
    return found is not None and any(
        s["source"] == "human" and s["edit"]["key_id"] == key_id for s in found[field]
    )


async def test_curator_edits_flow_through_records_to_articles_and_contradictions(
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
    admin_key = create_tenant(gateway.env)
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=30.0
    ) as admin:
        issued = {
            role: (await admin.post("/v1/keys", json={"role": role})).json()
            for role in ("curator", "default")
        }
        await upload(admin, "id,name,hq\nc1,Acme,Berlin\n")
        await entity_when(
            admin, "the document's facts", lambda v: fact(v, "hq", "Berlin") is not None
        )
    curator_id = issued["curator"]["key_id"]
    assert issued["curator"]["role"] == "curator"

    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {issued['default']['key']}"}
    ) as plain:
        refused = await plain.put(f"{FACTS}/phone", json={"value": "+47 1", "reason": "r"})
        assert refused.status_code == 403, refused.text

    async with httpx.AsyncClient(
        base_url=gateway.url,
        headers={"Authorization": f"Bearer {issued['curator']['key']}"},
        timeout=30.0,
    ) as curator:
        typo = await curator.put(f"{FACTS}/phone", json={"value": "+47 1", "reasn": "r"})
        assert typo.status_code == 422 and "reasn" in typo.text
        queried = await curator.put(
            f"{FACTS}/phone", params={"force": "1"}, json={"value": "+47 1", "reason": "r"}
        )
        assert queried.status_code == 422 and "force" in queried.text

        put = await curator.put(f"{FACTS}/phone", json={"value": "+47 1", "reason": "called them"})
        assert put.status_code == 202, put.text
        assert put.json()["key_id"] == curator_id and put.json()["action"] == "assert"
        view = await entity_when(
            curator,
            "the curator's value",
            lambda v: by_curator(fact(v, "phone", "+47 1"), curator_id),
        )
        (ref,) = fact(view, "phone", "+47 1")["support"]  # type: ignore[index]
        assert ref["edit"]["reason"] == "called them" and ref["edit"]["at"]
        line = next(x for x in view["article"].splitlines() if "phone" in x)
        assert f"human (curator key `{curator_id}`" in line and "called them" in line

        await upload(curator, "id,name,hq\nc1,Acme Co,Berlin\n")
        view = await entity_when(
            curator, "the document's next version", lambda v: fact(v, "name", "Acme Co") is not None
        )
        kept = fact(view, "phone", "+47 1")
        assert kept is not None and kept["status"] == "active" and by_curator(kept, curator_id)

        gone = await curator.request(
            "DELETE", f"{FACTS}/hq", json={"value": "Berlin", "reason": "they moved"}
        )
        assert gone.status_code == 202, gone.text
        view = await entity_when(
            curator,
            "the withdrawal contesting the document's value",
            lambda v: by_curator(fact(v, "hq", "Berlin"), curator_id, "contested_by"),
        )
        berlin = fact(view, "hq", "Berlin")
        assert berlin is not None and berlin["status"] == "contested"
        assert [s["source"] for s in berlin["support"]] == ["document"]
        listing = await curator.get(
            "/v1/knowledge/contradictions", params={"status": "open", "entity_id": ENTITY}
        )
        (opened,) = listing.json()["contradictions"]
        assert opened["attribute"] == "hq"
        assert "they moved" in view["article"]

        (withdrawal,) = berlin["contested_by"]
        pruned = await curator.post("/v1/prune", json={"record_ids": [withdrawal["record_id"]]})
        assert pruned.status_code == 202, pruned.text
        view = await entity_when(
            curator,
            "the pruned withdrawal to leave the document's value uncontested",
            lambda v: (fact(v, "hq", "Berlin") or {}).get("status") == "active",
        )
        assert "they moved" not in view["article"]
