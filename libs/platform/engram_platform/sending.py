"""The one way events leave a service: over a producer it owns, in record batches per partition.

The outbox relay, a stateless consumer's direct delivery and a request's `publish_now` all
send entries in the outbox's staged form (topic, key, encoded value, headers, event type)
through `KafkaSender.send`, so every event gets the same headers, partition and publish span.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind

from engram_events.topics import BULK_TOPICS
from engram_platform.kafka_security import kafka_security_options
from engram_platform.settings import ServiceSettings

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Documents travel inline; topics are created with a matching max.message.bytes."""
BATCH_BYTES = 512 * 1024
"""Record batch size per partition. aiokafka's 16 KiB default fit two 8 KiB embedding results
(five since vectors are packed), so publishing 256 of them took ~128 sequential round trips
(120-190 ms, measured)."""
OWN_BATCH_FROM = 8
"""Runs of at least this many messages go in record batches of their own (see `send_records`)."""
Message = tuple[bytes, bytes | None, list[tuple[str, bytes]]]
"""Key, value (None for a Kafka tombstone) and headers of one record to publish."""

_tracer = trace.get_tracer("engram.outbox")
_PARTITIONER = DefaultPartitioner()


def producer_options(settings: ServiceSettings, *, service: str) -> dict[str, Any]:
    """An acks=all producer with room for embedding results in one batch.

    Not Kafka's idempotent producer: aiokafka's cannot recover from OutOfOrderSequenceNumber
    (after a broker restart every later send failed until the process restarted; aio-libs/aiokafka
    issue 1017). Duplicates a retry may write are harmless: every event has a deterministic id
    and every consumer applies an event id once. aiokafka keeps one request in flight per broker,
    so retries do not reorder a partition.
    """
    return {
        "bootstrap_servers": settings.kafka_bootstrap_servers,
        "client_id": f"engram-{service}",
        "acks": "all",
        "enable_idempotence": False,
        "max_request_size": MAX_MESSAGE_BYTES,
        "max_batch_size": BATCH_BYTES,
        "request_timeout_ms": 30_000,
        **kafka_security_options(settings),
    }


class KafkaSender:
    """Owns an aiokafka producer (made when started, inside the running loop) and sends
    staged entries over it; `producer` hands an already running one in (tests).

    The bulk lane's topics get a producer of their own, made on their first send: aiokafka
    keeps one produce request in flight per broker and connection, so on a shared producer a
    single write's event waited for a bulk load's request of hundreds of events in flight, then
    went in the next one with hundreds more. Each topic keeps one producer, so no partition's
    order changes.
    """

    def __init__(self, options: dict[str, Any] | None = None, *, producer: Any = None) -> None:
        self.options = options or {}
        self._producer: Any = producer
        self._owned = False
        self._bulk: Any = None
        self._bulk_starting = asyncio.Lock()

    async def start(self) -> None:
        """Connect the producer; a no-op once started."""
        if self._producer is not None:
            return
        self._producer, self._owned = await _started(self.options), True

    async def stop(self) -> None:
        """Flush and close the producers this sender made."""
        producer, owned, bulk = self._producer, self._owned, self._bulk
        self._bulk = None
        if bulk is not None:
            await bulk.stop()
        if owned:
            self._producer, self._owned = None, False
            await producer.stop()

    async def producer_for(self, topic: str) -> Any:
        """The bulk lane's producer for its topics (started on first use), else the main one;
        a producer handed in serves every topic."""
        if not self._owned or not any(topic.endswith(base) for base in BULK_TOPICS):
            return self.producer
        async with self._bulk_starting:
            if self._bulk is None:
                client = f"{self.options.get('client_id', 'engram')}-bulk"
                self._bulk = await _started({**self.options, "client_id": client})
        return self._bulk

    @property
    def producer(self) -> Any:
        """The running aiokafka producer."""
        if self._producer is None:
            raise RuntimeError("the Kafka sender is not started")
        return self._producer

    async def send(self, entries: Sequence[dict[str, Any]]) -> None:
        """Publish entries in their staged form now, in order per topic; return once Kafka has
        all (entries repeated by id are sent once)."""
        confirmations: list[Any] = []
        for run in publish_runs(list({str(e["_id"]): e for e in entries}.values())):
            confirmations.extend(await self.send_run(run))
        await asyncio.gather(*[c for c in confirmations if isinstance(c, asyncio.Future)])

    async def send_run(self, run: list[dict[str, Any]]) -> list[Any]:
        """Hand a run of events to the producer in one publish span, a child of the work that
        staged them (a document's hundred records are one batch publish, not a hundred spans).

        Talks to aiokafka directly: the events are already encoded, and FastStream's
        per-message middleware cost more than the rest of the relay put together. Under a
        parent that is not sampled the span could not be recorded (tracing off, or a trace left
        out), so none is made: the staged headers carry the trace id on as they are.
        """
        first = run[0]
        if first["value"] is None:
            tombstones: list[Message] = [(d["key"].encode(), None, []) for d in run]
            return await self.send_records(first["topic"], tombstones)
        attributes: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.operation.type": "publish",
            "messaging.destination.name": first["topic"],
            "engram.event_type": first["event_type"],
        }
        if len(run) == 1:
            attributes["messaging.message.id"] = str(first["_id"])
        else:
            attributes["messaging.batch.message_count"] = len(run)
        parent = propagate.extract(dict(first.get("headers") or {}))
        if _unsampled(parent):
            return await self.send_records(first["topic"], _messages(run, {}))
        with _tracer.start_as_current_span(
            f"{first['topic']} publish",
            context=parent,
            kind=SpanKind.PRODUCER,
            attributes=attributes,
        ):
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            return await self.send_records(first["topic"], _messages(run, carrier))

    async def send_records(self, topic: str, messages: Sequence[Message]) -> list[Any]:
        """Hand messages to the producer: a few into its open batch for their partition, many
        into record batches of their own. Returns their delivery futures.

        The partition is the one `send` picks (the default partitioner over the key), so a key's
        events keep one partition and their order either way. A batch of its own costs half
        `send`'s CPU per message (8.6 against 17.8 us, most of what a relay pass cost), but it
        is a produce request of its own: one request per POST, queued one behind the other per
        broker, cost the gateway 8 % more CPU a POST and a sixth of its single-POST rate. A
        few messages join the open batch instead, which concurrent requests share.
        """
        producer = await self.producer_for(topic)
        partitions = sorted(await producer.partitions_for(topic))
        if len(messages) < OWN_BATCH_FROM:
            return [
                await producer.send(
                    topic,
                    value,
                    key=key,
                    partition=_PARTITIONER(key, partitions, partitions),
                    headers=headers,
                )
                for key, value, headers in messages
            ]
        open_batches: dict[int, Any] = {}
        delivered: list[Any] = []
        for key, value, headers in messages:
            partition = _PARTITIONER(key, partitions, partitions)
            batch = open_batches.get(partition)
            if batch is None:
                batch = open_batches[partition] = producer.create_batch()
            if batch.append(key=key, value=value, timestamp=None, headers=headers) is None:
                delivered.append(await producer.send_batch(batch, topic, partition=partition))
                batch = open_batches[partition] = producer.create_batch()
                batch.append(key=key, value=value, timestamp=None, headers=headers)
        for partition, batch in open_batches.items():
            delivered.append(await producer.send_batch(batch, topic, partition=partition))
        return delivered


def _unsampled(parent: Any) -> bool:
    """Whether the staged trace context names a parent left out of sampling."""
    span = trace.get_current_span(parent).get_span_context()
    return span.is_valid and not span.trace_flags.sampled


def _messages(run: list[dict[str, Any]], carrier: dict[str, str]) -> list[Message]:
    """The run's records: content type, event type, the publish span's trace headers (when one
    was made), then each entry's own staged headers that those do not replace."""
    trace_headers = [(name, value.encode()) for name, value in carrier.items()]
    messages: list[Message] = []
    for doc in run:
        staged = doc.get("headers") or {}
        extra = [(n, v.encode()) for n, v in staged.items() if n not in carrier]
        headers = [
            ("content-type", b"application/json"),
            ("event_type", doc["event_type"].encode()),
            *trace_headers,
            *extra,
        ]
        messages.append((doc["key"].encode(), bytes(doc["value"]), headers))
    return messages


async def _started(options: dict[str, Any]) -> AIOKafkaProducer:
    """A connected producer (closed again if it cannot connect)."""
    producer = AIOKafkaProducer(**options)
    try:
        await producer.start()
    except BaseException:
        await producer.stop()
        raise
    return producer


def publish_runs(entries: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Runs of entries with one origin, topic and event type (or tombstones).

    Order is kept within each topic, which is all Kafka orders; topics are taken one by one.
    """
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for doc in entries:
        by_topic.setdefault(doc["topic"], []).append(doc)
    runs: list[list[dict[str, Any]]] = []
    for docs in by_topic.values():
        last: tuple[Any, ...] | None = None
        for doc in docs:
            origin = (doc.get("headers") or {}).get("traceparent")
            group = (origin, doc["event_type"], doc["value"] is None)
            if group == last:
                runs[-1].append(doc)
            else:
                runs.append([doc])
            last = group
    return runs
