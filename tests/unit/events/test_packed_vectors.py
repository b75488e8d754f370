"""Embedding answers carry their vectors packed (base64 of float32), exactly, and answers
written before the packing (v1, numbers listed) still read."""

import json

import numpy as np
import pytest

from engram_events import MalformedEvent, decode, encode, new_event
from engram_events.catalog import EMBEDDING_BULK_COMPUTED
from engram_events.payloads.embeddings import EmbeddedItem, EmbeddingComputed
from tests.unit.platform.test_producer_batch import PROVENANCE

pytestmark = pytest.mark.unit


def answer(vector: object) -> bytes:
    payload = EmbeddingComputed(
        request_id="req_1",
        requester="memory",
        purpose="memory",
        items=[EmbeddedItem(item_id="mem_1", vector=vector)],
        provenance=PROVENANCE,
    )
    return encode(new_event(EMBEDDING_BULK_COMPUTED, payload, tenant_id="t1"))


def test_a_float32_vector_travels_packed_and_reads_back_exactly() -> None:
    vector = np.random.default_rng(7).standard_normal(384).astype(np.float32)
    raw = answer(vector)
    wire = json.loads(raw)
    assert wire["schema_version"] == 2, "a reader of v1 alone must refuse it by its version"
    assert isinstance(wire["payload"]["items"][0]["vector"], str)
    assert len(raw) < 384 * 8, "the numbers were listed, not packed"
    read = decode(raw).payload.items[0].vector
    assert read == vector.tolist()


def test_an_answer_listing_its_numbers_still_reads() -> None:
    wire = json.loads(answer([0.5, -0.25, 0.125, 1.0]))
    wire["schema_version"] = 1
    wire["payload"]["items"][0]["vector"] = [0.5, -0.25, 0.125, 1.0]
    assert decode(json.dumps(wire).encode()).payload.items[0].vector == [0.5, -0.25, 0.125, 1.0]


@pytest.mark.parametrize("packed", ["not base64!", "AAAAAAA=", "A" * 30_000])
def test_a_bad_packed_vector_is_a_malformed_event(packed: str) -> None:
    wire = json.loads(answer([0.5, 0.5, 0.5, 0.5]))
    wire["payload"]["items"][0]["vector"] = packed
    with pytest.raises(MalformedEvent):
        decode(json.dumps(wire).encode())
