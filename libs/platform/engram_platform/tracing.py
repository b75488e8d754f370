"""OpenTelemetry per service: OTLP when configured, else a local span store in MongoDB."""

from __future__ import annotations

import logging
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import bson
from bson.codec_options import CodecOptions
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.util.types import AttributeValue

from engram_platform.logs import SENSITIVE_KEYS, _looks_like_content, fingerprint
from engram_platform.settings import ServiceSettings

log = logging.getLogger(__name__)

SPANS_COLLECTION = "spans"
SPANS_CAP_BYTES = 256 * 1024 * 1024
_URL_KEYS = frozenset({"http.url", "url.full", "http.target"})
_ALLOWED_LONG = frozenset({"traceparent"})
_KEY_RULES: dict[str, str] = {}
_UNPACK: CodecOptions[dict[str, Any]] = CodecOptions(tz_aware=True, tzinfo=UTC)


def _key_rule(key: str) -> str:
    """How a key's values are cleaned: `url` (query dropped), `hash` (always) or `value` (by
    what the value looks like). Keys repeat on every span, so each is classified once."""
    rule = _KEY_RULES.get(key)
    if rule is None:
        leaf = key.rsplit(".", 1)[-1]
        if key in _URL_KEYS:
            rule = "url"
        elif key == "url.query" or "payload" in key or "body" in key or leaf in SENSITIVE_KEYS:
            rule = "hash"
        else:
            rule = "keep" if key in _ALLOWED_LONG else "value"
        if len(_KEY_RULES) < 4096:
            _KEY_RULES[key] = rule
    return rule


def sanitize_attributes(attrs: Mapping[str, AttributeValue] | None) -> dict[str, AttributeValue]:
    """Ids, counts and hashes pass; content-like values, query strings and payloads do not."""
    clean: dict[str, AttributeValue] = {}
    for key, value in (attrs or {}).items():
        rule = _KEY_RULES.get(key) or _key_rule(key)
        if rule == "value":
            clean[key] = fingerprint(value) if _looks_like_content(value) else value
        elif rule == "url":
            clean[key] = value.split("?", 1)[0] if isinstance(value, str) else value
        elif rule == "hash":
            clean[key] = fingerprint(value)
        else:
            clean[key] = value
    return clean


def _sanitized(span: ReadableSpan) -> ReadableSpan:
    """A copy of the span whose attributes and event attributes are sanitized."""
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=sanitize_attributes(span.attributes),
        events=[
            type(e)(e.name, sanitize_attributes(e.attributes), e.timestamp) for e in span.events
        ],
        links=span.links,
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class SanitizingExporter(SpanExporter):
    """Wraps any exporter so no span leaves the process carrying content."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([_sanitized(s) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def span_document(span: ReadableSpan) -> dict[str, Any]:
    """The local store's shape, sanitized here: what the ops dashboard reads."""
    ctx = span.context
    parent = span.parent
    start = span.start_time or 0
    end = span.end_time or start
    attributes = sanitize_attributes(span.attributes)
    return {
        "_id": f"{ctx.trace_id:032x}:{ctx.span_id:016x}",
        "trace_id": f"{ctx.trace_id:032x}",
        "span_id": f"{ctx.span_id:016x}",
        "parent_span_id": f"{parent.span_id:016x}" if parent else None,
        "name": span.name,
        "service": (span.resource.attributes.get("service.name") if span.resource else None),
        "kind": span.kind.name,
        "start": datetime.fromtimestamp(start / 1e9, UTC),
        "end": datetime.fromtimestamp(end / 1e9, UTC),
        "duration_ms": (end - start) / 1e6,
        "status": span.status.status_code.name,
        "attributes": [{"key": k, "value": v} for k, v in attributes.items()],
        "engram_ids": sorted({str(v) for k, v in attributes.items() if k.startswith("engram.")}),
        "events": [e.name for e in span.events],
    }


def span_batches(spans: Iterable[ReadableSpan]) -> list[dict[str, Any]]:
    """One stored row per trace per export: its spans packed as BSON, its ids beside for lookup.

    A row per span cost the MongoDB-protocol server more than the traced work itself; rows are
    compressed because that server's cost grows with the bytes it stores.
    """
    by_trace: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for span in spans:
        doc = span_document(span)
        by_trace[doc["trace_id"]].append(doc)
    return [
        {
            "_id": members[0]["_id"],
            "trace_id": trace_id,
            "services": sorted({str(m["service"]) for m in members}),
            "start": min(m["start"] for m in members),
            "engram_ids": sorted({i for m in members for i in m["engram_ids"]}),
            "count": len(members),
            "packed": zlib.compress(bson.encode({"spans": members}), 1),
        }
        for trace_id, members in by_trace.items()
    ]


def unpack_spans(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The span documents a stored row holds."""
    raw = zlib.decompress(row["packed"])
    spans: list[dict[str, Any]] = bson.decode(raw, codec_options=_UNPACK)["spans"]
    return spans


class MongoSpanExporter(SpanExporter):
    """Writes sanitized span rows to a capped collection, on the batch processor's thread."""

    def __init__(self, uri: str, database: str) -> None:
        from pymongo import MongoClient

        self.client: Any = MongoClient(uri, serverSelectionTimeoutMS=3000, tz_aware=True)
        self.database = database
        self._ready = False

    def _collection(self) -> Any:
        db = self.client[self.database]
        if not self._ready:
            if SPANS_COLLECTION not in db.list_collection_names():
                try:
                    db.create_collection(SPANS_COLLECTION, capped=True, size=SPANS_CAP_BYTES)
                except Exception:
                    log.debug("spans collection exists or cannot be capped")
            self._ready = True
        return db[SPANS_COLLECTION]

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            self._collection().insert_many(span_batches(spans), ordered=False)
        except Exception as exc:
            log.warning("span export failed", extra={"error_type": type(exc).__name__})
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.client.close()


def setup_tracing(
    service: str, settings: ServiceSettings, *, install_global: bool = True
) -> TracerProvider:
    """A provider with service.name set, exported sanitized; tests keep several side by side.
    With tracing off it samples nothing, so spans are not recorded (only their ids propagate)
    instead of being built in full and dropped."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": f"engram-{service}"}),
        sampler=None if settings.tracing_enabled else ALWAYS_OFF,
    )
    if settings.tracing_enabled:
        exporter: SpanExporter
        if settings.otlp_endpoint:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            otlp = OTLPSpanExporter(endpoint=f"{settings.otlp_endpoint.rstrip('/')}/v1/traces")
            exporter = SanitizingExporter(otlp)
        else:
            exporter = MongoSpanExporter(
                settings.mongodb_uri.get_secret_value(), settings.telemetry_database
            )
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=500))
    if install_global:
        trace.set_tracer_provider(provider)
    return provider
