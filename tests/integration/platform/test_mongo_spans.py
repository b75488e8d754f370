"""MongoDB command spans over the real server: motor keeps the caller's trace, services export them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pymongo import MongoClient

from engram_platform.mongo import connect_mongo
from engram_platform.tracing_mongo import MongoSpans
from tests.conftest import Infra
from tests.support.kafka import wait_for
from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.spans import first_span, stored_spans
from tests.support.tenants import create_tenant

CANARY = "CANARY-2e7b-content the safe combination is left-17-right-42"


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: a["value"] for a in span["attributes"]}


async def test_motor_commands_are_children_of_the_awaiting_task_span(
    infra: Infra, names: dict[str, str]
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = connect_mongo(
        infra.mongodb_uri, app_name="spans-test", event_listeners=[MongoSpans(provider)]
    )
    rows = client[f"{names['ENGRAM_DATABASE_PREFIX']}spans_test"]["rows"]
    tracer = provider.get_tracer("test")

    async def work(n: int) -> int:
        with tracer.start_as_current_span(f"task-{n}") as parent:
            await rows.insert_one({"_id": f"r{n}", "text": CANARY})
            await rows.find_one({"_id": f"r{n}"})
            await rows.find({"_id": f"r{n}"}).to_list(None)
            return parent.get_span_context().span_id

    try:
        parents = await asyncio.gather(*(work(n) for n in range(4)))
        await rows.find_one({"_id": "r0"})
    finally:
        await client.drop_database(rows.database.name)
        client.close()
    spans = [s for s in exporter.get_finished_spans() if s.name.endswith(" rows")]
    assert len(spans) == 12, "three commands per task, none for the untraced find"
    by_parent: dict[int, list[str]] = {}
    tasks = {s.context.span_id: s for s in exporter.get_finished_spans() if s.name[:5] == "task-"}
    for span in spans:
        assert span.parent is not None and span.parent.span_id in tasks
        assert span.context.trace_id == tasks[span.parent.span_id].context.trace_id
        by_parent.setdefault(span.parent.span_id, []).append(span.name)
    assert set(by_parent) == set(parents)
    assert all(sorted(v) == ["find rows", "find rows", "insert rows"] for v in by_parent.values())
    assert "CANARY" not in json.dumps([s.to_json() for s in exporter.get_finished_spans()])


async def test_a_documents_trace_holds_mongodb_spans_under_its_own_spans(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    ingest = service("ingest")
    gateway = service("gateway", ENGRAM_GATEWAY_INGEST_URL=ingest.url)
    key = create_tenant(gateway.env)
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}
    ) as client:
        accepted = await client.post(
            "/v1/documents", json={"name": "notes.txt", "mime": "text/plain", "text": CANARY}
        )
    assert accepted.status_code == 202, accepted.text
    await wait_for(
        infra.bootstrap,
        f"{names['ENGRAM_TOPIC_PREFIX']}engram.documents.v1",
        lambda m: m.get("event_type") == "document.ingested",
    )
    db = MongoClient[dict[str, Any]](infra.mongodb_uri)[
        f"{names['ENGRAM_DATABASE_PREFIX']}telemetry"
    ]

    def request_trace() -> list[dict[str, Any]]:
        post = first_span(db.spans, name="POST /v1/documents", service="engram-gateway")
        return [] if post is None else stored_spans(db.spans, trace_id=post["trace_id"])

    trace: list[dict[str, Any]] = until(
        request_trace,
        "ingest's MongoDB commands in the request's trace",
        30,
        ready=lambda trace: any(
            s["service"] == "engram-ingest" and _attrs(s).get("db.system") == "mongodb"
            for s in trace
        ),
    )
    mongo = [s for s in trace if _attrs(s).get("db.system") == "mongodb"]
    by_id = {s["span_id"]: s for s in trace}
    ingest_mongo = [s for s in mongo if s["service"] == "engram-ingest"]
    assert ingest_mongo, "ingest's MongoDB commands joined the document's trace"
    assert all(s["kind"] == "CLIENT" and s["parent_span_id"] in by_id for s in mongo)
    assert any(by_id[s["parent_span_id"]]["kind"] == "CONSUMER" for s in ingest_mongo)
    attrs = _attrs(ingest_mongo[0])
    assert attrs["db.namespace"] == f"{names['ENGRAM_DATABASE_PREFIX']}ingest"
    assert {"db.operation.name", "db.collection.name", "server.address", "server.port"} <= set(
        attrs
    )
    assert not any(_attrs(s).get("db.collection.name") == "spans" for s in stored_spans(db.spans))
    everything = json.dumps(stored_spans(db.spans), default=str)
    assert "CANARY" not in everything and "combination" not in everything
