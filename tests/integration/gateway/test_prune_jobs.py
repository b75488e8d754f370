"""Prune jobs at the gateway: the job and its event are one write; acknowledgements complete it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from engram_devstack import free_port
from engram_events import encode, new_event
from engram_events.catalog import TOMBSTONE_APPLIED
from engram_events.payloads.tombstones import TombstoneApplied
from tests.conftest import Infra
from tests.support.kafka import produce, wait_for
from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant


def _applied(
    tenant: str, job: str, service: str, source: list[str], tombstoned: list[str], **counts: int
) -> bytes:
    payload = TombstoneApplied(
        prune_job_id=job,
        service=service,
        counts=counts,
        source_ids=source,
        tombstoned_ids=tombstoned,
    )
    return encode(new_event(TOMBSTONE_APPLIED, payload, tenant_id=tenant))


def _tenant_of(gateway: ServiceProcess, key: str) -> str:
    from pymongo import MongoClient

    db = MongoClient[dict[str, Any]](gateway.env["MONGODB_URI"])[
        f"{gateway.env['ENGRAM_DATABASE_PREFIX']}gateway"
    ]
    row = db.api_keys.find_one({"_id": key.split("_")[1]})
    assert row is not None
    return str(row["tenant_id"])


def _running_jobs(gateway: ServiceProcess) -> list[str]:
    from pymongo import MongoClient

    db = MongoClient[dict[str, Any]](gateway.env["MONGODB_URI"])[
        f"{gateway.env['ENGRAM_DATABASE_PREFIX']}gateway"
    ]
    return [str(doc["_id"]) for doc in db.prune_jobs.find({"status": "running"})]


def _gateway_alone(service: Callable[..., ServiceProcess], **env: str) -> ServiceProcess:
    """A gateway whose owning services never answer: the test plays their acknowledgements."""
    dead = f"http://127.0.0.1:{free_port()}"
    return service(
        "gateway",
        ENGRAM_GATEWAY_EXTRACTION_URL=dead,
        ENGRAM_GATEWAY_ENRICHMENT_URL=dead,
        ENGRAM_GATEWAY_MEMORY_URL=dead,
        ENGRAM_GATEWAY_INGEST_URL=dead,
        **env,
    )


async def test_a_prune_job_completes_when_every_stage_acknowledges(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    gateway = _gateway_alone(service, ENGRAM_GATEWAY_PRUNE_VERIFY_GRACE_SECONDS="1")
    key = create_tenant(gateway.env)
    tenant = _tenant_of(gateway, key)
    prefix = names["ENGRAM_TOPIC_PREFIX"]
    with httpx.Client(base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}) as client:
        bad = client.post("/v1/prune", json={"filter": {"record_type": "carrier"}})
        assert bad.status_code == 422
        assert client.post("/v1/prune", json={"record_ids": [{"$ne": 1}]}).status_code == 422
        started = client.post("/v1/prune", json={"record_ids": ["rec_1", "rec_2"]})
        assert started.status_code == 202, started.text
        job = started.json()["prune_job_id"]
        requested = await wait_for(
            infra.bootstrap,
            f"{prefix}engram.prune.v1",
            lambda m: m.get("event_type") == "prune.requested",
        )
        assert requested[0]["payload"]["prune_job_id"] == job
        assert requested[0]["payload"]["selector"]["record_ids"] == ["rec_1", "rec_2"]

        extraction = _applied(tenant, job, "extraction", [], ["rec_1", "rec_2"], records=2)
        await produce(
            infra.bootstrap,
            f"{prefix}engram.tombstones.v1",
            [
                extraction,
                extraction,
                _applied(tenant, job, "enrichment", ["rec_1", "rec_2"], ["fact_1"], facts=1),
                _applied(tenant, job, "memory", ["rec_1", "rec_2"], ["mem_1"], memories=1),
            ],
            key=job.encode(),
        )
        waiting = until(
            lambda: client.get(f"/v1/prune-jobs/{job}").json(),
            "memory's acknowledgement, the last of the four, handled (one of three pending)",
            30,
            ready=lambda state: (
                state["acknowledgements"]["memory"] == {"expected": 3, "pending": 1}
            ),
        )
        assert waiting["status"] == "running"
        assert _running_jobs(gateway) == [f"{tenant}:{job}"]
        assert waiting["acknowledgements"]["memory"] == {"expected": 3, "pending": 1}

        await produce(
            infra.bootstrap,
            f"{prefix}engram.tombstones.v1",
            [_applied(tenant, job, "memory", ["fact_1"], [], memories=0), extraction],
            key=job.encode(),
        )
        state = until(
            lambda: client.get(f"/v1/prune-jobs/{job}").json(),
            "the job completed",
            30,
            ready=lambda state: state["status"] == "completed",
        )
        other = create_tenant(gateway.env, "other")
        foreign = httpx.get(
            f"{gateway.url}/v1/prune-jobs/{job}", headers={"Authorization": f"Bearer {other}"}
        )

    assert state["status"] == "completed"
    assert state["selector"] == {"record_ids": ["rec_1", "rec_2"]}, "stored packed, shown as given"
    assert _running_jobs(gateway) == [], "a finished job leaves the finalizer's view"
    assert state["counts"] == {"records": 2, "facts": 1, "memories": 1}, "a redelivery counts once"
    assert state["verified_empty"] is False, "no owning service answered, so nothing is verified"
    assert set(state["verification"]["unverified"]) == {"extraction", "enrichment", "memory"}
    assert foreign.status_code == 404


def test_a_job_status_previews_a_long_selection_and_lists_it_in_full_on_request(
    service: Callable[..., ServiceProcess],
) -> None:
    from pymongo import MongoClient

    gateway = _gateway_alone(service)
    key = create_tenant(gateway.env)
    tenant = _tenant_of(gateway, key)
    db = MongoClient[dict[str, Any]](gateway.env["MONGODB_URI"])[
        f"{gateway.env['ENGRAM_DATABASE_PREFIX']}gateway"
    ]
    ids = [f"rec_{n:03d}" for n in range(25)]
    with httpx.Client(base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}) as client:
        job = client.post("/v1/prune", json={"record_ids": ids}).json()["prune_job_id"]
        shown = client.get(f"/v1/prune-jobs/{job}").json()
        full = client.get(f"/v1/prune-jobs/{job}", params={"selector": "full"}).json()
        bogus = client.get(f"/v1/prune-jobs/{job}", params={"selector": "all"})

    assert shown["selector"] == {"record_ids": ids[:20]}
    assert shown["selector_sizes"] == {"record_ids": 25} and shown["selector_truncated"] is True
    assert full["selector"] == {"record_ids": ids} and full["selector_truncated"] is False
    assert bogus.status_code == 422
    row = db.prune_jobs.find_one({"_id": f"{tenant}:{job}"})
    assert row is not None and "selector_packed" not in row
    assert len(row["selector_preview"]["record_ids"]) == 20, "the job row keeps a preview only"
