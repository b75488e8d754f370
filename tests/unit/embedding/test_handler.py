"""Embedding requests: invalid items never reach the model; provenance is the embedder's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    HistogramDataPoint,
    InMemoryMetricReader,
    NumberDataPoint,
)

from engram_embedders import Embeddings
from engram_embedding.handlers import EmbeddingHandlers
from engram_embedding.service.requests import EmbeddingRequests
from engram_events import Envelope, new_event
from engram_events.catalog import (
    EMBEDDING_BULK_COMPUTED,
    EMBEDDING_BULK_REQUESTED,
    EMBEDDING_COMPUTED,
    EMBEDDING_REQUESTED,
)
from engram_events.payloads.embeddings import EmbeddingRequested, TextItem
from engram_platform.metrics import PipelineMetrics
from tests.unit.memory.fakes import CountingEmbedder

pytestmark = pytest.mark.unit


def _request(*texts: str) -> Envelope[EmbeddingRequested]:
    items = [TextItem(item_id=f"i{n}", text=text) for n, text in enumerate(texts)]
    payload = EmbeddingRequested(request_id="r1", requester="memory", purpose="memory", items=items)
    return new_event(EMBEDDING_REQUESTED, payload, tenant_id="t1")


async def test_whitespace_items_are_rejected_before_the_embedder_sees_them() -> None:
    embedder = CountingEmbedder()
    requests = EmbeddingRequests(embedder, batch_size=8)
    [out] = await requests.answer(_request("real text", "   ", "\n\t"))
    computed = out.payload
    assert [i.item_id for i in computed.items] == ["i0"]
    assert {(r.item_id, r.reason) for r in computed.rejected} == {
        ("i1", "whitespace"),
        ("i2", "whitespace"),
    }
    assert embedder.texts == ["real text"] and embedder.calls == 1


async def test_provenance_is_what_the_embedder_returned() -> None:
    embedder = CountingEmbedder(model_id="reported-by-the-embedder")
    requests = EmbeddingRequests(embedder, batch_size=8)
    [out] = await requests.answer(_request("hello"))
    assert out.payload.provenance.model_dump() == embedder.provenance.model_dump()
    assert out.payload.provenance.precision == "fp16"


async def test_a_batch_of_requests_is_embedded_in_one_call_per_chunk() -> None:
    embedder = CountingEmbedder()
    requests = EmbeddingRequests(embedder, batch_size=3)
    events = [_request(f"text {n}", f"more {n}") for n in range(3)]
    await requests.prefetch(events)
    assert embedder.calls == 2
    outs = [await requests.answer(e) for e in events]
    assert embedder.calls == 2
    assert all(len(out[0].payload.items) == 2 for out in outs)


async def test_each_embedder_call_records_texts_batch_size_and_duration() -> None:
    reader = InMemoryMetricReader()
    metrics = PipelineMetrics("embedding", MeterProvider(metric_readers=[reader]))
    requests = EmbeddingRequests(CountingEmbedder(model_id="m1"), batch_size=3, metrics=metrics)
    await requests.prefetch([_request("a", "b"), _request("c", "d")])
    data = reader.get_metrics_data()
    assert data is not None
    points = {
        metric.name: list(metric.data.data_points)
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for metric in sm.metrics
    }
    texts, [batches], durations = (
        points["engram.embedder.texts"],
        points["engram.embedder.batch.size"],
        points["engram.embedder.duration"],
    )
    assert isinstance(texts[0], NumberDataPoint) and texts[0].value == 4
    assert isinstance(batches, HistogramDataPoint)
    assert (batches.count, batches.sum, batches.max) == (2, 4, 3)
    assert isinstance(durations[0], HistogramDataPoint) and durations[0].count == 2
    assert dict(batches.attributes or {}) == {"service": "embedding", "model": "m1"}


async def test_the_batch_route_embeds_a_run_together_and_answers_each_request() -> None:
    embedder = CountingEmbedder()
    requests = EmbeddingRequests(embedder, batch_size=8)
    events = [_request(f"text {n}", "  ") for n in range(3)]
    results = await EmbeddingHandlers(requests).on_requested_many(events)
    assert embedder.calls == 1 and len(embedder.texts) == 3
    computed = [result[0].payload for result in results]  # type: ignore[index]
    assert [[i.item_id for i in c.items] for c in computed] == [["i0"]] * 3
    assert all(c.rejected[0].reason == "whitespace" for c in computed)
    assert not requests._prefetched


class LoggedEmbedder(CountingEmbedder):
    """Logs when each embedder call starts."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        self.log.append(f"embed {','.join(texts)}")
        return await super().embed(texts)


class LoggedRequests(EmbeddingRequests):
    """Logs when each request is answered."""

    def __init__(self, embedder: LoggedEmbedder, batch_size: int) -> None:
        super().__init__(embedder, batch_size)
        self.log = embedder.log

    async def answer(self, event: Envelope[EmbeddingRequested]) -> list[Envelope[Any]]:
        self.log.append(f"answer {event.payload.items[0].text}")
        return await super().answer(event)


async def test_every_batch_is_queued_for_the_embedder_before_the_first_is_answered() -> None:
    log: list[str] = []
    requests = LoggedRequests(LoggedEmbedder(log), batch_size=2)
    events = [_request(f"t{n}") for n in range(5)]
    results = await requests.answer_run(events)
    assert log == [
        "embed t0,t1",
        "embed t2,t3",
        "embed t4",
        "answer t0",
        "answer t1",
        "answer t2",
        "answer t3",
        "answer t4",
    ]
    vectors = [result[0].payload.items[0].vector for result in results]  # type: ignore[index]
    alone = [(await requests.answer(e))[0].payload.items[0].vector for e in events]
    assert vectors == alone
    assert not requests._prefetched


async def test_prepared_batches_are_all_queued_before_the_first_run_is_answered() -> None:
    log: list[str] = []
    embedder = LoggedEmbedder(log)
    requests = LoggedRequests(embedder, batch_size=2)
    events = [_request(f"t{n}") for n in range(5)]
    requests.prepare(events)
    first = await requests.answer_run(events[:2])
    rest = await requests.answer_run(events[2:])
    assert log[:3] == ["embed t0,t1", "embed t2,t3", "embed t4"]
    assert log[3:] == [f"answer t{n}" for n in range(5)]
    assert embedder.calls == 3
    assert [r[0].payload.request_id for r in first + rest] == ["r1"] * 5  # type: ignore[index]
    assert not requests._prefetched and not requests._ahead


async def test_a_fetch_read_ahead_keeps_the_one_in_flight_and_cancels_the_one_before() -> None:
    embedder = CountingEmbedder()
    requests = EmbeddingRequests(embedder, batch_size=2)
    stale = [_request(f"old {n}") for n in range(4)]
    requests.prepare(stale)
    abandoned = set(requests._ahead.values())
    in_flight = [_request(f"now {n}") for n in range(2)]
    requests.prepare(in_flight)
    assert not any(task.cancelled() for task in abandoned)
    kept = set(requests._ahead.values()) - abandoned
    ahead = [_request("next")]
    requests.prepare(ahead)
    answered = await requests.answer_run(in_flight)
    assert all(task.cancelled() for task in abandoned)
    assert not any(task.cancelled() for task in kept)
    assert [r[0].payload.items[0].item_id for r in answered] == ["i0", "i0"]  # type: ignore[index]
    results = await requests.answer_run(ahead)
    assert results[0][0].payload.items[0].item_id == "i0"  # type: ignore[index]
    assert "old 0" not in embedder.texts
    assert not requests._prefetched and not requests._ahead


class FailingEmbedder(CountingEmbedder):
    """Fails every call whose texts include 'bad'."""

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        if "bad" in texts:
            raise RuntimeError("the model failed")
        return await super().embed(texts)


async def test_a_failed_batch_fails_only_its_own_requests() -> None:
    requests = EmbeddingRequests(FailingEmbedder(), batch_size=2)
    events = [_request(text) for text in ("a", "bad", "c", "d")]
    requests.prepare(events)
    results = await requests.answer_run(events)
    assert [isinstance(r, RuntimeError) for r in results] == [True, True, False, False]
    assert not requests._prefetched and not requests._ahead


async def test_a_bulk_lane_request_is_answered_on_the_bulk_lane() -> None:
    requests = EmbeddingRequests(CountingEmbedder(), batch_size=8)
    interactive = _request("single write")
    bulk = new_event(EMBEDDING_BULK_REQUESTED, _request("bulk write").payload, tenant_id="t1")
    [answered] = await requests.answer(interactive)
    [bulk_answered] = await requests.answer(bulk)
    assert answered.event_type == EMBEDDING_COMPUTED.name
    assert bulk_answered.event_type == EMBEDDING_BULK_COMPUTED.name
