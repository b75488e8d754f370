"""MongoDB commands as client spans in the caller's trace (names and counts, never documents).

pymongo calls a CommandListener on the thread that runs the command; motor runs it in an
executor under a copy of the caller's contextvars, so the current span is the caller's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from pymongo import monitoring

from engram_platform.telemetry_store import METRICS_COLLECTION
from engram_platform.tracing import SPANS_COLLECTION

TELEMETRY_COLLECTIONS = frozenset({SPANS_COLLECTION, METRICS_COLLECTION})
UNTRACED_COMMANDS = frozenset(
    {"hello", "ismaster", "ping", "endsessions", "buildinfo", "saslstart", "saslcontinue"}
)
"""Handshakes, health checks and session clean-up: noise in every trace, no work done."""


def command_collection(command_name: str, command: Any) -> str | None:
    """The collection a command targets: its first value for most, `collection` for getMore."""
    target = command.get("collection") if command_name == "getMore" else command.get(command_name)
    return target if isinstance(target, str) else None


class MongoSpans(monitoring.CommandListener):
    """Opens a span when a command starts inside a trace and ends it when the reply comes."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        skip_databases: Iterable[str] = (),
        skip_collections: Iterable[str] = TELEMETRY_COLLECTIONS,
    ) -> None:
        provider = tracer_provider or trace.get_tracer_provider()
        self.tracer = provider.get_tracer("engram.mongodb")
        self.skip_databases = frozenset(skip_databases)
        self.skip_collections = frozenset(skip_collections)
        self._open: dict[tuple[Any, int, Any], Span] = {}

    @staticmethod
    def _key(event: Any) -> tuple[Any, int, Any]:
        return (event.connection_id, event.request_id, event.service_id)

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        """Only commands inside a trace: a root span per background poll would flood the store."""
        name = event.command_name
        if name.lower() in UNTRACED_COMMANDS or event.database_name in self.skip_databases:
            return
        if not trace.get_current_span().get_span_context().is_valid:
            return
        collection = command_collection(name, event.command)
        if collection in self.skip_collections:
            return
        attributes: dict[str, str | int] = {
            "db.system": "mongodb",
            "db.system.name": "mongodb",
            "db.operation.name": name,
            "db.operation": name,
            "db.namespace": event.database_name,
        }
        if collection is not None:
            attributes["db.collection.name"] = collection
            attributes["db.mongodb.collection"] = collection
        host, port = event.connection_id
        attributes["server.address"] = str(host)
        if isinstance(port, int):
            attributes["server.port"] = port
        span = self.tracer.start_span(
            f"{name} {collection or event.database_name}",
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        self._open[self._key(event)] = span

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        """The reply came: end the span."""
        span = self._open.pop(self._key(event), None)
        if span is not None:
            span.end()

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        """The server refused or the connection broke: error code and type, never the message."""
        span = self._open.pop(self._key(event), None)
        if span is None:
            return
        failure = event.failure
        code = failure.get("code")
        kind = failure.get("codeName") or failure.get("errtype") or code or "failed"
        span.set_attribute("error.type", str(kind))
        if code is not None:
            span.set_attribute("db.response.status_code", str(code))
        span.set_status(Status(StatusCode.ERROR))
        span.end()
