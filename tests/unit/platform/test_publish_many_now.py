"""A request's events reach Kafka with the topics, keys and headers consumers route on."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest
from opentelemetry import context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from engram_events import Envelope, encode, new_event
from engram_events.catalog import (
    EMBEDDING_COMPUTED,
    EMBEDDING_REQUESTED,
    MEMORY_REJECTED,
    MEMORY_WRITE_REQUESTED,
)
from engram_events.payloads.embeddings import (
    EmbeddedItem,
    EmbeddingComputed,
    EmbeddingRequested,
    TextItem,
    VectorProvenance,
)
from engram_events.payloads.memories import MemoryRejected, MemoryWriteRequested
from engram_platform.publish import publish_many_now
from engram_platform.sending import OWN_BATCH_FROM, KafkaSender

pytestmark = pytest.mark.unit

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
Record = tuple[str, bytes, bytes, dict[str, bytes]]


class Batch:
    """An aiokafka record batch that holds every append, headers included."""

    def __init__(self) -> None:
        self.records: list[tuple[bytes, bytes, list[tuple[str, bytes]]]] = []

    def append(self, *, key: bytes, value: bytes, timestamp: Any, headers: Any) -> object:
        self.records.append((key, value, list(headers)))
        return object()


class Producer:
    """The raw aiokafka producer, recording what each sent batch held per topic, and how each
    message was handed over (`send` joins the open batch; `send_batch` is a batch of its own)."""

    def __init__(self) -> None:
        self.sent: list[Record] = []
        self.handed: list[str] = []

    async def partitions_for(self, topic: str) -> set[int]:
        return {0, 1, 2}

    def create_batch(self) -> Batch:
        return Batch()

    async def send_batch(self, batch: Batch, topic: str, *, partition: int) -> Any:
        self.sent += [(topic, k, v, dict(h)) for k, v, h in batch.records]
        self.handed.append(f"own batch of {len(batch.records)}")
        return delivered()

    async def send(
        self, topic: str, value: bytes, *, key: bytes, partition: int, headers: Any
    ) -> Any:
        self.sent.append((topic, key, value, dict(headers)))
        self.handed.append("open batch")
        return delivered()


def delivered() -> asyncio.Future[None]:
    """What aiokafka hands back for a message or batch Kafka has taken."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    done.set_result(None)
    return done


def broker(producer: Producer) -> Any:
    """A broker whose sender sends over the fake above."""
    return SimpleNamespace(sender=KafkaSender(producer=producer))


def write(n: int, agent: str) -> Envelope[Any]:
    payload = MemoryWriteRequested(memory_id=f"mem_{n}", agent_id=agent, content=f"note {n}")
    return new_event(MEMORY_WRITE_REQUESTED, payload, tenant_id="tnt_1")


def rejected(agent: str) -> Envelope[Any]:
    payload = MemoryRejected(memory_id="mem_9", agent_id=agent, reason="empty")
    return new_event(MEMORY_REJECTED, payload, tenant_id="tnt_1")


def embed(request_id: str) -> Envelope[Any]:
    item = TextItem(item_id="mem_1", text="note 1")
    payload = EmbeddingRequested(
        request_id=request_id, requester="memory", purpose="memory", items=[item]
    )
    return new_event(EMBEDDING_REQUESTED, payload, tenant_id="tnt_1")


async def test_each_event_goes_to_its_topic_under_its_key_with_type_and_trace_headers() -> None:
    events = [write(1, "agt_a"), embed("req_1"), rejected("agt_a"), write(2, "agt_b")]
    events.append(write(3, "agt_a"))
    topics = [
        "t1.engram.memories.v1",
        "t1.engram.embeddings.v1",
        "t1.engram.memory-outcomes.v1",
        *["t1.engram.memories.v1"] * 2,
    ]
    keys = [b"agt_a", b"req_1", b"agt_a", b"agt_b", b"agt_a"]
    producer = Producer()
    parent = SpanContext(TRACE_ID, 0x00F067AA0BA902B7, True, TraceFlags(TraceFlags.SAMPLED))
    token = context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
    try:
        await publish_many_now(broker(producer), events, topic_prefix="t1.")
    finally:
        context.detach(token)
    by_value = {value: (topic, key, headers) for topic, key, value, headers in producer.sent}
    assert len(producer.sent) == len(events)
    for event, want_topic, want_key in zip(events, topics, keys, strict=True):
        topic, key, headers = by_value[encode(event)]
        assert (topic, key) == (want_topic, want_key)
        assert set(headers) == {"content-type", "event_type", "traceparent"}
        assert headers["content-type"] == b"application/json"
        assert headers["event_type"] == event.event_type.encode()
        assert headers["traceparent"].decode().split("-")[1] == f"{TRACE_ID:032x}"
    agent_a = [v for t, k, v, _ in producer.sent if (t, k) == ("t1.engram.memories.v1", b"agt_a")]
    assert agent_a == [encode(events[0]), encode(events[4])], "one key's order on its topic"


async def test_under_an_unsampled_parent_no_publish_span_is_made_and_its_ids_travel() -> None:
    producer = Producer()
    parent = SpanContext(TRACE_ID, 0x00F067AA0BA902B7, True, TraceFlags(TraceFlags.DEFAULT))
    token = context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
    try:
        await publish_many_now(broker(producer), [write(1, "agt_a")], topic_prefix="t1.")
    finally:
        context.detach(token)
    [(_, _, _, headers)] = producer.sent
    assert headers["traceparent"] == f"00-{TRACE_ID:032x}-00f067aa0ba902b7-00".encode(), (
        "the parent's own span id: a publish span, even unrecorded, would have a new one"
    )


async def test_a_requests_few_events_join_the_open_batch_that_concurrent_requests_share() -> None:
    producer = Producer()
    await publish_many_now(broker(producer), [write(1, "agt_a")])
    await publish_many_now(broker(producer), [write(n, "agt_a") for n in range(2, 9)])
    assert producer.handed == ["open batch"] * 8
    assert [json.loads(value)["payload"]["memory_id"] for _, _, value, _ in producer.sent] == [
        f"mem_{n}" for n in range(1, 9)
    ]


async def test_many_events_of_one_key_go_in_a_batch_of_their_own() -> None:
    producer = Producer()
    events = [write(n, "agt_a") for n in range(OWN_BATCH_FROM)]
    await publish_many_now(broker(producer), events)
    assert producer.handed == [f"own batch of {OWN_BATCH_FROM}"]


async def test_nothing_to_publish_sends_nothing() -> None:
    producer = Producer()
    await publish_many_now(broker(producer), [])
    assert producer.sent == []


async def test_an_embedding_answer_is_addressed_to_its_requester_by_a_header() -> None:
    provenance = VectorProvenance(
        provider="hashing",
        model_id="hashing-3",
        weights_sha256="0" * 64,
        dimension=3,
        normalized=True,
        precision="float32",
        fingerprint="1" * 64,
    )
    payload = EmbeddingComputed(
        request_id="req_1",
        requester="enrichment",
        purpose="passage",
        items=[EmbeddedItem(item_id="psg_1", vector=[1.0, 0.0, 0.0])],
        provenance=provenance,
    )
    producer = Producer()
    answer = new_event(EMBEDDING_COMPUTED, payload, tenant_id="tnt_1")
    await publish_many_now(broker(producer), [answer, write(1, "agt_a")])
    headers = {topic: h for topic, _, _, h in producer.sent}
    assert headers["engram.embeddings.v1"]["recipient"] == b"enrichment"
    assert "recipient" not in headers["engram.memories.v1"]
