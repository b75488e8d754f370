"""The ops dashboard over the real broker and database: auth, metrics in the store, traces."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.conftest import Infra
from tests.integration.ops.support import create_ops_tenant, telemetry
from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.spans import stored_spans
from tests.support.tenants import create_tenant

FAST_METRICS = {"ENGRAM_METRICS_INTERVAL_SECONDS": "1", "ENGRAM_LAG_INTERVAL_SECONDS": "1"}
CSV = "id,name\nc1,Acme Freight\n"


async def test_ops_needs_a_key_with_the_ops_role_and_shows_no_data_without_it(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    gateway = service("gateway")
    plain_key = create_tenant(gateway.env)
    ops_key = create_ops_tenant(gateway.env)
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        anonymous = await client.get("/ops")
        assert anonymous.status_code == 401
        assert 'name="api_key"' in anonymous.text and "Pipeline" not in anonymous.text
        no_role = await client.get("/ops", headers={"Authorization": f"Bearer {plain_key}"})
        assert no_role.status_code == 403 and "Pipeline" not in no_role.text
        for path in ("/ops/dlq", "/ops/lookup?id=doc_1", "/ops/traces/" + "0" * 32):
            denied = await client.get(path)
            assert denied.status_code == 401, path
            assert denied.headers["content-type"].startswith("application/problem+json")
            refused = await client.get(path, headers={"Authorization": f"Bearer {plain_key}"})
            assert refused.status_code == 403, path
        replay = await client.post("/ops/dlq/replay", data={"consumer": "ingest"})
        assert replay.status_code == 401
        wrong = await client.post("/ops/login", data={"api_key": plain_key})
        assert wrong.status_code == 403 and "set-cookie" not in wrong.headers
        login = await client.post("/ops/login", data={"api_key": ops_key})
        assert login.status_code == 303
        cookie = login.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/ops" in cookie
        page = await client.get("/ops")
        assert page.status_code == 200 and "Pipeline" in page.text and "Dead letters" in page.text
        for unknown in ("0" * 32, "not-a-trace-<b>"):
            missing = await client.get(f"/ops/traces/{unknown}")
            assert missing.status_code == 404 and 'id="not-found"' in missing.text, unknown
            assert "<b>" not in missing.text, "the id is shown escaped"
        css = await client.get("/ops/static/ops.css")
        assert css.status_code == 200 and "http" not in css.text
        await client.post("/ops/logout")
        client.cookies.clear()
        assert (await client.get("/ops")).status_code == 401
    spans = telemetry(infra, names).spans
    until(
        lambda: any(s["name"].startswith("POST /ops/login") for s in stored_spans(spans)),
        "login span",
        30,
    )
    assert ops_key not in str(stored_spans(spans))
    assert ops_key not in gateway.logs()


async def test_consumer_metrics_reach_the_store_and_the_pipeline_picture(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    ingest = service("ingest", **FAST_METRICS)
    gateway = service("gateway", ENGRAM_GATEWAY_INGEST_URL=ingest.url, **FAST_METRICS)
    key = create_ops_tenant(gateway.env)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers) as client:
        accepted = await client.post(
            "/v1/documents", json={"name": "carriers.csv", "mime": "text/csv", "text": CSV}
        )
        assert accepted.status_code == 202, accepted.text
        document_id = accepted.json()["document_id"]
        metrics = telemetry(infra, names).metrics
        applied = until(
            lambda: list(
                metrics.find(
                    {
                        "name": "engram.consumer.processed",
                        "service": "engram-ingest",
                        "labels.outcome": "applied",
                        "labels.event_type": "document.submitted",
                    }
                )
            ),
            "ingest's processed counter",
            30,
        )
        assert sum(p["value"] for p in applied) >= 1
        assert metrics.find_one({"name": "engram.consumer.handler.duration", "kind": "histogram"})
        lag = until(
            lambda: metrics.find_one(
                {"name": "engram.consumer.lag", "service": "engram-ingest", "kind": "gauge"}
            ),
            "ingest's lag gauge",
            30,
        )
        assert lag["labels"]["group"].endswith("engram-ingest") and lag["value"] >= 0
        route = until(
            lambda: metrics.find_one(
                {"name": "http.server.request.duration", "labels.http_route": "/v1/documents"}
            ),
            "the gateway's route histogram",
            30,
        )
        assert route["service"] == "engram-gateway" and route["count"] >= 1
        page = await client.get("/ops")
        assert page.status_code == 200
        assert 'data-service="ingest"' in page.text
        found = until(
            lambda: (
                httpx.get(
                    f"{gateway.url}/ops/lookup", params={"id": document_id}, headers=headers
                ).status_code
                == 303
            ),
            "the document's trace",
            30,
        )
        assert found
        opened = await client.get("/ops/lookup", params={"id": document_id}, follow_redirects=True)
    assert opened.status_code == 200 and "engram-ingest" in opened.text
    assert document_id in opened.text
