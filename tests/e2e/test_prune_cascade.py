"""Issue 6's scenario: prune a source and prove everything derived from it is gone, and only that."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from pymongo import MongoClient

from tests.support.platform import Platform
from tests.support.polling import until
from tests.support.tenants import create_tenant

FLEET_A = "id,name,city\nc1,Acme,Gdansk\nc2,Borealis,Oslo\n"
FLEET_B = "type,id,city\ncarrier,c1,Riga\ncarrier,c3,Tallinn\n"


def wait_for_job(client: httpx.Client, job_id: str, timeout: float = 120.0) -> dict[str, Any]:
    """Poll a prune job until it completes; fail showing what it still waits for."""
    job: dict[str, Any] = until(
        lambda: client.get(f"/v1/prune-jobs/{job_id}").json(),
        f"prune job {job_id} to complete",
        timeout,
        ready=lambda job: job["status"] == "completed",
    )
    return job


def upload(client: httpx.Client, name: str, text: str) -> str:
    response = client.post("/v1/documents", json={"name": name, "mime": "text/csv", "text": text})
    assert response.status_code == 202, response.text
    doc_id: str = response.json()["document_id"]
    until(
        lambda: client.get(f"/v1/documents/{doc_id}").json().get("status") == "extracted",
        f"{name} extracted",
    )
    return doc_id


def records_of(client: httpx.Client, doc_id: str) -> dict[str, str]:
    page = client.get("/v1/records", params={"document_id": doc_id, "limit": "100"}).json()
    return {r["entity_id"]: r["record_id"] for r in page["records"]}


def facts(client: httpx.Client, entity: str) -> dict[tuple[str, Any], dict[str, Any]]:
    response = client.get(f"/v1/knowledge/entities/{entity}")
    if response.status_code != 200:
        return {}
    return {(f["attribute"], f["value"]): f for f in response.json()["facts"]}


def remember(client: httpx.Client, agent: str, content: str, derived: list[str]) -> str:
    response = client.post(
        f"/v1/agents/{agent}/memories", json={"content": content, "derived_from": derived}
    )
    assert response.status_code == 202, response.text
    memory_id: str = response.json()["memory_id"]
    until(
        lambda: (
            client.get(f"/v1/agents/{agent}/memories/{memory_id}").json().get("status") == "active"
        ),
        "memory active",
    )
    return memory_id


def recalled(client: httpx.Client, agent: str, query: str) -> set[str]:
    body = {"query": query, "top_k": 10, "min_score": -1.0}
    response = client.post(f"/v1/agents/{agent}/recall", json=body)
    assert response.status_code == 200, response.text
    return {r["memory_id"] for r in response.json()["results"]}


def check_lineage(client: httpx.Client, doc_a: str, rec_a: dict[str, str], from_a: str) -> None:
    """Document → records → facts → memories, and back from a memory and a fact."""
    response = client.get(f"/v1/lineage/{doc_a}")
    assert response.status_code == 200, response.text
    doc = response.json()
    assert doc["kind"] == "document"
    assert {r["record_id"] for r in doc["derives"]["records"]} == set(rec_a.values())
    assert {f["entity_id"] for f in doc["derives"]["facts"]} == {"carrier:c1", "carrier:c2"}
    assert from_a in {m["memory_id"] for m in doc["derives"]["memories"]}
    memory = client.get(f"/v1/lineage/{from_a}").json()
    assert memory["derives_from"]["ids"] == [rec_a["carrier:c2"]]
    a_fact = next(f for f in doc["derives"]["facts"] if f["entity_id"] == "carrier:c2")
    fact = client.get(f"/v1/lineage/{a_fact['fact_id']}").json()
    assert [r["record_id"] for r in fact["derives_from"]["records"]] == [rec_a["carrier:c2"]]
    assert fact["derives_from"]["records"][0]["lineage"]["document_id"] == doc_a
    assert client.get("/v1/lineage/rec_does_not_exist").status_code == 404


def scenario(platform: Platform, during_cascade: Callable[[], None]) -> None:
    """Ingest two sources, derive knowledge and memories, delete one source, check the end state."""
    with platform.client(create_tenant(platform.env, "cascade")) as client:
        doc_a = upload(client, "carriers.csv", FLEET_A)
        doc_b = upload(client, "fleet.csv", FLEET_B)
        rec_a = records_of(client, doc_a)
        rec_b = records_of(client, doc_b)
        until(lambda: ("city", "Riga") in facts(client, "carrier:c1"), "facts derived")
        until(
            lambda: facts(client, "carrier:c1")[("city", "Gdansk")]["status"] == "contested",
            "the contradiction",
        )
        agent = client.post("/v1/agents", json={"name": "dispatcher"}).json()["agent_id"]
        from_a = remember(client, agent, "Borealis operates out of Oslo", [rec_a["carrier:c2"]])
        from_b = remember(client, agent, "Carrier c3 is based in Tallinn", [rec_b["carrier:c3"]])
        free = remember(client, agent, "Weekly planning happens on Mondays", [])
        assert {from_a, from_b, free} <= recalled(client, agent, "where are carriers based")

        check_lineage(client, doc_a, rec_a, from_a)

        started = client.delete(f"/v1/documents/{doc_a}")
        assert started.status_code == 202, started.text
        job_id = started.json()["prune_job_id"]
        during_cascade()
        job = wait_for_job(client, job_id)
        assert job["verified_empty"] is True, (job["verification"], job["counts"])
        assert job["counts"]["records"] == 2
        assert job["counts"]["documents"] == 1
        c1 = facts(client, "carrier:c1")
        assert ("city", "Gdansk") not in c1 and ("name", "Acme") not in c1
        assert c1[("city", "Riga")]["status"] == "active", "the other source's fact survives"
        assert [s["record_id"] for s in c1[("city", "Riga")]["support"]] == [rec_b["carrier:c1"]]
        assert "Gdansk" not in client.get("/v1/knowledge/entities/carrier:c1").json()["article"]
        assert facts(client, "carrier:c2") == {} or all(
            f["status"] == "withdrawn" for f in facts(client, "carrier:c2").values()
        )
        assert ("city", "Tallinn") in facts(client, "carrier:c3")
        left = recalled(client, agent, "where are carriers based")
        assert from_a not in left and {from_b, free} <= left
        gone = client.get(f"/v1/agents/{agent}/memories/{from_a}").json()
        assert gone["status"] == "withdrawn"
        assert client.get(f"/v1/documents/{doc_a}").json()["status"] == "deleted"
        assert client.get(f"/v1/documents/{doc_b}").json()["status"] == "extracted"


def prune_durations(platform: Platform) -> list[dict[str, Any]]:
    """The gateway's prune-job duration points in the local metrics store."""
    db = MongoClient[dict[str, Any]](platform.env["MONGODB_URI"])[
        f"{platform.env['ENGRAM_DATABASE_PREFIX']}telemetry"
    ]
    return list(db.metrics.find({"name": "engram.prune.job.duration", "service": "engram-gateway"}))


def test_deleting_a_document_prunes_everything_derived_and_nothing_else(platform: Platform) -> None:
    scenario(platform, lambda: None)
    [point, *_] = until(lambda: prune_durations(platform), "the prune job's duration metric", 30)
    assert point["labels"]["kind"] == "document" and point["labels"]["verified_empty"] == "true"
    assert point["count"] >= 1 and point["sum"] > 0


def test_the_cascade_survives_kill_9_of_each_consuming_service(platform: Platform) -> None:
    def kill_each() -> None:
        for name in ("ingest", "extraction", "enrichment", "memory", "gateway"):
            service = platform.services[name]
            service.kill9()
            service.start()

    scenario(platform, kill_each)
