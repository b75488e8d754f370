"""MongoDB command events become client spans in the caller's trace, carrying names, not values."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from pymongo.monitoring import CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent

from engram_platform.tracing_mongo import MongoSpans, command_collection

pytestmark = pytest.mark.unit

CANARY = "CANARY-91ab the vault code is 4471"
ADDRESS = ("db.internal", 27017)


def _tracing() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _started(command: dict[str, Any], request_id: int = 1, db: str = "engram_memory") -> Any:
    return CommandStartedEvent(command, db, request_id, ADDRESS, request_id)


def _succeeded(name: str, request_id: int = 1) -> Any:
    return CommandSucceededEvent(timedelta(milliseconds=1), {"ok": 1}, name, request_id, ADDRESS, 1)


def test_a_command_inside_a_trace_is_a_child_client_span_without_values() -> None:
    provider, exporter = _tracing()
    listener = MongoSpans(provider)
    with provider.get_tracer("t").start_as_current_span("handler") as parent:
        listener.started(_started({"insert": "memories", "documents": [{"text": CANARY}]}))
        listener.succeeded(_succeeded("insert"))
    [span, _] = exporter.get_finished_spans()
    assert span.name == "insert memories" and span.kind is SpanKind.CLIENT
    assert span.parent is not None and span.parent.span_id == parent.get_span_context().span_id
    assert span.context.trace_id == parent.get_span_context().trace_id
    assert dict(span.attributes or {}) == {
        "db.system": "mongodb",
        "db.system.name": "mongodb",
        "db.operation.name": "insert",
        "db.operation": "insert",
        "db.namespace": "engram_memory",
        "db.collection.name": "memories",
        "db.mongodb.collection": "memories",
        "server.address": "db.internal",
        "server.port": 27017,
    }
    assert "CANARY" not in json.dumps(span.to_json())


def test_no_trace_no_span_so_background_polls_do_not_flood_the_store() -> None:
    provider, exporter = _tracing()
    listener = MongoSpans(provider)
    listener.started(_started({"find": "outbox", "filter": {}}))
    listener.succeeded(_succeeded("find"))
    assert exporter.get_finished_spans() == ()
    assert listener._open == {}


def test_telemetry_writes_and_handshakes_are_skipped() -> None:
    provider, exporter = _tracing()
    listener = MongoSpans(provider, skip_databases=["engram_telemetry"])
    with provider.get_tracer("t").start_as_current_span("request"):
        listener.started(_started({"insert": "spans"}, 1))
        listener.started(_started({"find": "metrics"}, 2))
        listener.started(_started({"find": "anything"}, 3, db="engram_telemetry"))
        listener.started(_started({"ping": 1}, 4, db="admin"))
        for n, name in enumerate(["insert", "find", "find", "ping"], start=1):
            listener.succeeded(_succeeded(name, n))
    assert [s.name for s in exporter.get_finished_spans()] == ["request"]


def test_a_failed_command_names_its_error_code_but_not_its_message() -> None:
    provider, exporter = _tracing()
    listener = MongoSpans(provider)
    failure = {"ok": 0, "code": 11000, "codeName": "DuplicateKey", "errmsg": f"dup {CANARY}"}
    with provider.get_tracer("t").start_as_current_span("handler"):
        listener.started(_started({"update": "rows", "updates": [{"q": {"x": CANARY}}]}))
        listener.failed(CommandFailedEvent(timedelta(0), failure, "update", 1, ADDRESS, 1))
    span = exporter.get_finished_spans()[0]
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "DuplicateKey"
    assert (span.attributes or {})["db.response.status_code"] == "11000"
    assert "CANARY" not in json.dumps(span.to_json())


def test_the_collection_comes_from_the_command_or_from_getmore() -> None:
    assert command_collection("find", {"find": "memories", "filter": {}}) == "memories"
    assert command_collection("getMore", {"getMore": 12, "collection": "rows"}) == "rows"
    assert command_collection("listCollections", {"listCollections": 1}) is None
