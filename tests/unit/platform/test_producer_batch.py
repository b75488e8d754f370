"""The producer's record batch holds dozens of embedding results, not aiokafka's default few.

A batch per partition is one round trip; at 16 KiB, publishing 256 results took ~128 of them
when vectors were listed as JSON numbers, and ~50 packed.
Nothing is started: the test builds the producer the sender would, from `producer_options`.
"""

from __future__ import annotations

import math
import random
import struct
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import aiokafka
import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import EMBEDDING_COMPUTED
from engram_events.payloads.embeddings import EmbeddedItem, EmbeddingComputed, VectorProvenance
from engram_platform.outbox import outbox_entry
from engram_platform.sending import BATCH_BYTES, producer_options
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit

DIMENSION = 384
RESULTS = 32
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
PROVENANCE = VectorProvenance(
    provider="onnx",
    model_id="sentence-transformers/all-MiniLM-L6-v2",
    weights_sha256="a" * 64,
    dimension=DIMENSION,
    normalized=True,
    precision="int8",
    fingerprint="b" * 64,
)


def unit_vector(rng: random.Random) -> list[float]:
    """A normalised float32 vector as the embedder returns it (float32 values, long reprs)."""
    raw = [rng.gauss(0.0, 1.0) for _ in range(DIMENSION)]
    norm = math.sqrt(sum(x * x for x in raw))
    packed = struct.pack(f"{DIMENSION}f", *(x / norm for x in raw))
    return list(struct.unpack(f"{DIMENSION}f", packed))


def embedding_result(n: int, rng: random.Random) -> Envelope[Any]:
    """One memory's `embedding.computed`: a single item of 384 floats."""
    item_id = f"mem_{n:032x}"
    payload = EmbeddingComputed(
        request_id=item_id,
        requester="memory",
        purpose="memory",
        items=[EmbeddedItem(item_id=item_id, vector=unit_vector(rng))],
        provenance=PROVENANCE,
        text_sha256=["c" * 64],
    )
    return new_event(EMBEDDING_COMPUTED, payload, tenant_id="tnt_1")


def fits(producer: aiokafka.AIOKafkaProducer, envelopes: list[Envelope[Any]]) -> int:
    """How many of these events one record batch of this producer takes, sent as the relay
    sends them (key, encoded envelope, content type, event type and trace headers)."""
    batch = producer.create_batch()
    now = datetime.now(UTC)
    for taken, envelope in enumerate(envelopes):
        entry = outbox_entry(envelope, "", now, taken, {"traceparent": TRACEPARENT})
        headers = [
            ("content-type", b"application/json"),
            ("event_type", entry["event_type"].encode()),
            ("traceparent", TRACEPARENT.encode()),
        ]
        key, value = entry["key"].encode(), entry["value"]
        if batch.append(key=key, value=value, timestamp=None, headers=headers) is None:
            return taken
    return len(envelopes)


@pytest.fixture
async def producers() -> AsyncIterator[tuple[aiokafka.AIOKafkaProducer, ...]]:
    """The producer a service's sender would build, and one with aiokafka's defaults."""
    ours = aiokafka.AIOKafkaProducer(**producer_options(ServiceSettings(), service="embedding"))
    default = aiokafka.AIOKafkaProducer()
    yield ours, default
    await ours.stop()
    await default.stop()


def test_the_sender_configures_its_producer_with_the_batch_size() -> None:
    assert producer_options(ServiceSettings(), service="embedding")["max_batch_size"] == BATCH_BYTES


async def test_one_batch_holds_32_embedding_results_where_the_default_holds_a_few(
    producers: tuple[aiokafka.AIOKafkaProducer, ...],
) -> None:
    ours, default = producers
    rng = random.Random(384)
    results = [embedding_result(n, rng) for n in range(RESULTS)]
    assert fits(ours, results) == RESULTS
    assert fits(default, results) <= 8
