"""Delivery guarantees over the real broker and database (docs/architecture.md)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pymongo import MongoClient

from engram_events import encode, new_event
from engram_events.catalog import DOCUMENT_SUBMITTED
from engram_events.payloads.documents import DocumentSubmitted
from tests.conftest import Infra
from tests.support.kafka import produce, read_all, wait_for
from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.spans import first_span, stored_spans
from tests.support.tenants import create_tenant

CSV = b"id,name\nc1,Acme Freight\n"


def _submitted(tenant: str = "tnt_a", content: bytes = CSV, doc: str = "doc_1") -> Any:
    sha = hashlib.sha256(content).hexdigest()
    payload = DocumentSubmitted(
        document_id=doc,
        version=sha[:16],
        source="gateway",
        source_item_id="carriers.csv",
        name="carriers.csv",
        mime="text/csv",
        content_sha256=sha,
        size_bytes=len(content),
        content_base64=base64.b64encode(content).decode(),
    )
    return new_event(DOCUMENT_SUBMITTED, payload, tenant_id=tenant)


def _db(infra: Infra, names: dict[str, str], service: str) -> Any:
    return MongoClient(infra.mongodb_uri)[f"{names['ENGRAM_DATABASE_PREFIX']}{service}"]


def _topic(names: dict[str, str], base: str) -> str:
    return f"{names['ENGRAM_TOPIC_PREFIX']}{base}"


def _key(gateway: ServiceProcess) -> str:
    return create_tenant(gateway.env)


async def test_event_crosses_two_services_and_arrives_once(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    ingest = service("ingest")
    gateway = service("gateway", ENGRAM_GATEWAY_INGEST_URL=ingest.url)
    key = _key(gateway)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers) as client:
        accepted = await client.post(
            "/v1/documents", json={"name": "carriers.csv", "mime": "text/csv", "text": CSV.decode()}
        )
        assert accepted.status_code == 202, accepted.text
        doc_id = accepted.json()["document_id"]
        ingested = await wait_for(
            infra.bootstrap,
            _topic(names, "engram.documents.v1"),
            lambda m: m.get("event_type") == "document.ingested",
        )
        status = await client.get(f"/v1/documents/{doc_id}")
    assert len(ingested) == 1
    assert ingested[0]["payload"]["document_id"] == doc_id
    assert (
        status.status_code == 200 and status.json()["latest_version"] == accepted.json()["version"]
    )


async def test_duplicate_delivery_has_one_effect(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    service("ingest")
    event = _submitted()
    await produce(
        infra.bootstrap, _topic(names, "engram.documents.v1"), [encode(event)] * 3, key=b"doc_1"
    )
    await wait_for(
        infra.bootstrap,
        _topic(names, "engram.documents.v1"),
        lambda m: m.get("event_type") == "document.ingested",
    )
    messages = await read_all(infra.bootstrap, _topic(names, "engram.documents.v1"), settle=3.0)
    ingested = [m for m in messages if m and m.get("event_type") == "document.ingested"]
    db = _db(infra, names, "ingest")
    assert len(ingested) == 1
    assert db.extract_log.count_documents({}) == 1
    assert db.blobs.count_documents({}) == 1
    assert db.applied_events.count_documents({}) == 1


async def test_malformed_messages_go_to_the_dlq_and_the_stream_continues(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    service("ingest")
    good = _submitted(doc="doc_good")
    unknown_version = json.loads(encode(_submitted(doc="doc_v9")))
    unknown_version["schema_version"] = 9
    bad_hash = json.loads(encode(_submitted(doc="doc_hash")))
    bad_hash["payload"]["content_sha256"] = "0" * 64
    await produce(
        infra.bootstrap,
        _topic(names, "engram.documents.v1"),
        [
            b"{not json",
            json.dumps(unknown_version).encode(),
            json.dumps(bad_hash).encode(),
            encode(good),
        ],
    )
    letters = await wait_for(
        infra.bootstrap, _topic(names, "engram.dlq.v1"), lambda m: True, count=3
    )
    ingested = await wait_for(
        infra.bootstrap,
        _topic(names, "engram.documents.v1"),
        lambda m: m.get("event_type") == "document.ingested",
    )
    reasons = sorted(letter["error_type"] for letter in letters)
    assert reasons == ["PermanentError", "malformed", "unsupported_schema_version"]
    assert all(letter["consumer"] == "ingest" and letter["attempts"] >= 1 for letter in letters)
    assert b"{not json" in {base64.b64decode(letter["value_base64"]) for letter in letters}
    assert [m["payload"]["document_id"] for m in ingested] == ["doc_good"]


async def test_crash_between_state_write_and_publish_still_publishes(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    ingest = service("ingest", ENGRAM_OUTBOX_RELAY="false")
    await produce(infra.bootstrap, _topic(names, "engram.documents.v1"), [encode(_submitted())])
    db = _db(infra, names, "ingest")
    until(lambda: db.applied_events.count_documents({}), "the event applied", 30, 0.2)
    assert db.extract_log.count_documents({}) == 1, "the state write happened"
    assert db.outbox.count_documents({}) == 1, "its event is staged, not yet published"
    before = await read_all(infra.bootstrap, _topic(names, "engram.documents.v1"))
    assert not [m for m in before if m and m.get("event_type") == "document.ingested"]

    ingest.kill9()
    ingest.start(extra_env={"ENGRAM_OUTBOX_RELAY": "true"})

    ingested = await wait_for(
        infra.bootstrap,
        _topic(names, "engram.documents.v1"),
        lambda m: m.get("event_type") == "document.ingested",
    )
    after = await read_all(infra.bootstrap, _topic(names, "engram.documents.v1"), settle=2.0)
    assert len(ingested) == 1
    assert len([m for m in after if m and m.get("event_type") == "document.ingested"]) == 1
    assert db.outbox.count_documents({}) == 0


@pytest.mark.parametrize("path", ["/v1/documents"])
async def test_one_request_is_one_trace_across_services(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], path: str
) -> None:
    ingest = service("ingest")
    gateway = service("gateway", ENGRAM_GATEWAY_INGEST_URL=ingest.url)
    key = _key(gateway)
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}
    ) as client:
        accepted = await client.post(
            path, json={"name": "a.csv", "mime": "text/csv", "text": "id\n1\n"}
        )
    assert accepted.status_code == 202
    await wait_for(
        infra.bootstrap,
        _topic(names, "engram.documents.v1"),
        lambda m: m.get("event_type") == "document.ingested",
    )
    spans = _db(infra, names, "telemetry").spans

    def request_trace() -> list[dict[str, Any]]:
        post = first_span(spans, name="POST /v1/documents", service="engram-gateway")
        return [] if post is None else stored_spans(spans, trace_id=post["trace_id"])

    trace: list[dict[str, Any]] = until(
        request_trace,
        "the request's trace through ingest's publish",
        20,
        ready=lambda trace: (
            {"engram-gateway", "engram-ingest"} <= {s["service"] for s in trace}
            and any(s["service"] == "engram-ingest" and "publish" in s["name"] for s in trace)
        ),
    )
    services = {s["service"] for s in trace}
    assert {"engram-gateway", "engram-ingest"} <= services
    by_id = {s["span_id"]: s for s in trace}
    consume = [s for s in trace if s["service"] == "engram-ingest" and s["kind"] == "CONSUMER"]
    assert consume, "ingest consumed within the request's trace"
    assert all(s["parent_span_id"] in by_id for s in consume), "parent links cross Kafka intact"
