"""The consumer's spans: one per handled message (or per group of messages sharing a parent),
under the trace the message carried, and one per batch call linking its inputs' parents."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanKind, Status, StatusCode, Tracer

from engram_events import Envelope
from engram_platform.consuming.messages import Outcome, Work, text_headers

ID_FIELDS = (
    "document_id",
    "record_id",
    "memory_id",
    "agent_id",
    "fact_id",
    "prune_job_id",
    "import_id",
)
"""Payload ids copied onto the handler span as `engram.<field>`, so ops can find a trace by id."""
_PROPAGATED = ("traceparent", "tracestate", "baggage")
"""The headers the default propagators read: a message's context is a function of these."""


class ConsumerSpans:
    """Starts and finishes one consumer group's spans."""

    def __init__(self, tracer: Tracer, *, service: str, group_id: str) -> None:
        self.tracer = tracer
        self.service = service
        self.group_id = group_id
        self._contexts: dict[tuple[str | None, ...], Context] = {}

    def parent_context(self, record: Any) -> Context:
        """The trace context a message carried, extracted once per distinct set of propagation
        headers: a run's messages mostly carry the same one."""
        headers = text_headers(record)
        if "traceparent" not in headers:
            return propagate.extract(headers)
        key = tuple(headers.get(name) for name in _PROPAGATED)
        cached = self._contexts.get(key)
        if cached is None:
            cached = propagate.extract(headers)
            if len(self._contexts) >= 1024:
                self._contexts.clear()
            self._contexts[key] = cached
        return cached

    @contextmanager
    def batch_call(
        self, run: list[Work], contexts: list[Context]
    ) -> Iterator[tuple[Any, list[Any]]]:
        """The batch call's span (current while inside) and, per input, its message span."""
        event_type = run[0][2].event_type
        parents = [trace.get_current_span(c).get_span_context() for c in contexts]
        with self.tracer.start_as_current_span(
            f"{run[0][1].topic} process {event_type} batch",
            kind=SpanKind.CONSUMER,
            links=[Link(p) for p in _distinct(parents) if p.is_valid],
        ) as batch_span:
            batch_span.set_attributes(
                {
                    "messaging.system": "kafka",
                    "messaging.batch.message_count": len(run),
                    "engram.event_type": event_type,
                    "engram.consumer": self.service,
                }
            )
            yield batch_span, self._run_spans(run, contexts, parents)

    def _run_spans(self, run: list[Work], contexts: list[Context], parents: list[Any]) -> list[Any]:
        """Per input, its span: its own, or one shared with the inputs of the same parent.

        Inputs that carried no trace context share one span too, so what they stage carries one
        trace and the relay sends it in long runs. A span each split a 1,000-record fetch into
        runs of one record's few events, each a produce call and a publish span of its own
        (the relay's CPU 2.3x, an idle record's article visible after 150 ms instead of 60).
        """
        members: dict[Any, list[int]] = {}
        for i, parent in enumerate(parents):
            key = (parent.trace_id, parent.span_id) if parent.is_valid else None
            members.setdefault(key, []).append(i)
        spans: list[Any] = [None] * len(run)
        for group in members.values():
            _, record, envelope = run[group[0]]
            span = self.start(envelope, record, contexts[group[0]], [run[i] for i in group])
            for i in group:
                spans[i] = span
        return spans

    def start(
        self,
        envelope: Envelope[Any],
        record: Any,
        parent: Context | None = None,
        shared: list[Work] | None = None,
    ) -> Any:
        """A consumer span under the message's trace context (extracted here unless the batch
        already did), linked to the batch's span; `shared` are the inputs it stands for when
        there are several."""
        if parent is None:
            parent = propagate.extract(text_headers(record))
        batch_span = trace.get_current_span().get_span_context()
        links = [Link(batch_span)] if batch_span.is_valid else []
        attributes: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.destination.name": record.topic,
            "messaging.kafka.offset": record.offset,
            "messaging.destination.partition.id": str(record.partition),
            "messaging.consumer.group.name": self.group_id,
            "engram.tenant_id": envelope.tenant_id,
            "engram.event_id": str(envelope.event_id),
            "engram.event_type": envelope.event_type,
            "engram.consumer": self.service,
            **_payload_ids(envelope),
        }
        if shared is not None and len(shared) > 1:
            attributes = _shared_attributes(attributes, shared)
        return self.tracer.start_span(
            f"{record.topic} process {envelope.event_type}",
            context=parent,
            kind=SpanKind.CONSUMER,
            links=links,
            attributes=attributes,
        )


def finish_span(span: Any, outcomes: list[Outcome]) -> None:
    """The outcome, or for a shared span each outcome's count; an error if any input was
    dead-lettered."""
    kinds = set(outcomes)
    if len(kinds) == 1:
        span.set_attribute("engram.outcome", outcomes[0].value)
    else:
        span.set_attribute("engram.outcome", "mixed")
    if len(outcomes) > 1:
        span.set_attributes(
            {f"engram.outcome.{kind.value}": outcomes.count(kind) for kind in kinds}
        )
    if Outcome.DEAD_LETTERED in kinds:
        span.set_status(Status(StatusCode.ERROR))


def count_published(span: Any, published: int) -> None:
    """Add to the span's count of events its inputs published."""
    so_far = (getattr(span, "attributes", None) or {}).get("engram.published_count", 0)
    span.set_attribute("engram.published_count", int(so_far) + published)


_ID_FIELDS_OF: dict[type[Any], tuple[tuple[str, str], ...]] = {}


def _id_fields(payload_type: type[Any]) -> tuple[tuple[str, str], ...]:
    """(field, span attribute) for the ID_FIELDS a payload type declares: asking a pydantic
    model for a field it lacks raises inside, a quarter of the span cost in a prune."""
    found = _ID_FIELDS_OF.get(payload_type)
    if found is None:
        declared = getattr(payload_type, "model_fields", {})
        found = tuple((name, f"engram.{name}") for name in ID_FIELDS if name in declared)
        _ID_FIELDS_OF[payload_type] = found
    return found


def _payload_ids(envelope: Envelope[Any]) -> dict[str, str]:
    """The aggregate ids an event names (ids only, never content)."""
    payload = envelope.payload
    found = {key: getattr(payload, name) for name, key in _id_fields(type(payload))}
    return {key: value for key, value in found.items() if isinstance(value, str) and value}


def _shared_attributes(first: dict[str, Any], members: list[Work]) -> dict[str, Any]:
    """A span standing for several inputs: their count, offsets (when on one partition) and
    the ids they all name; the first input's own ids (its event id, ids the others do not
    share) are dropped."""
    envelopes = [envelope for _, _, envelope in members]
    common = _payload_ids(envelopes[0])
    for envelope in envelopes[1:]:
        theirs = _payload_ids(envelope)
        common = {k: v for k, v in common.items() if theirs.get(k) == v}
    dropped = {"engram.event_id", *(k for k in _payload_ids(envelopes[0]) if k not in common)}
    if any(e.tenant_id != envelopes[0].tenant_id for e in envelopes):
        dropped.add("engram.tenant_id")
    shared: dict[str, Any] = {"messaging.batch.message_count": len(members)}
    if len({record.partition for _, record, _ in members}) == 1:
        shared["engram.last_offset"] = members[-1][1].offset
    else:
        dropped.update({"messaging.kafka.offset", "messaging.destination.partition.id"})
    return {**{k: v for k, v in first.items() if k not in dropped}, **shared}


def _distinct(parents: list[Any]) -> list[Any]:
    """One of each parent span context, in order."""
    seen: dict[tuple[int, int], Any] = {}
    for parent in parents:
        seen.setdefault((parent.trace_id, parent.span_id), parent)
    return list(seen.values())
