"""The model's turns: a request written one at a time is embedded before a bulk load's batches
that were waiting, so a bulk load delays it by at most the batch being embedded."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from engram_embedders import Embeddings
from engram_embedding.service.model_turns import ModelTurns
from engram_embedding.service.requests import EmbeddingRequests
from engram_events import Envelope, new_event
from engram_events.catalog import EMBEDDING_BULK_REQUESTED, EMBEDDING_REQUESTED
from engram_events.payloads.embeddings import EmbeddingRequested, TextItem
from tests.unit.memory.fakes import CountingEmbedder

pytestmark = pytest.mark.unit


class GatedEmbedder(CountingEmbedder):
    """Embeds only when the test lets each call through, noting the calls' first texts."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []
        self.release = asyncio.Event()

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        self.order.append(texts[0])
        await self.release.wait()
        return await super().embed(texts)


def request(kind: str, text: str) -> Envelope[EmbeddingRequested]:
    event_type = EMBEDDING_BULK_REQUESTED if kind == "bulk" else EMBEDDING_REQUESTED
    payload = EmbeddingRequested(
        request_id=f"r_{text.replace(' ', '_')}",
        requester="memory",
        purpose="memory",
        items=[TextItem(item_id=f"i_{text.replace(' ', '_')}", text=text)],
    )
    return new_event(event_type, payload, tenant_id="t1")


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_an_interactive_request_goes_before_bulk_batches_already_waiting() -> None:
    embedder = GatedEmbedder()
    requests = EmbeddingRequests(embedder, batch_size=1)
    requests.prepare([request("bulk", "bulk one"), request("bulk", "bulk two")])
    requests.prepare([request("bulk", "bulk three")])
    await settle()
    single = request("interactive", "single")
    requests.prepare([single])
    await settle()
    assert embedder.order == ["bulk one"], "one call at a time reaches the model"
    embedder.release.set()
    [answered] = await requests.answer_run([single])
    assert not isinstance(answered, BaseException)
    [answer] = answered
    assert answer.payload.request_id == "r_single"
    await settle()
    assert embedder.order[:2] == ["bulk one", "single"]
    assert sorted(embedder.order[2:]) == ["bulk three", "bulk two"]
    assert requests.turns.overtaken == 1


async def test_a_bulk_fetch_reaches_the_model_in_calls_of_bounded_text_a_single_one_whole() -> None:
    embedder = GatedEmbedder()
    embedder.release.set()
    requests = EmbeddingRequests(embedder, batch_size=64, bulk_call_chars=25)
    bulk = [request("bulk", f"bulk text {n}") for n in range(4)]
    await requests.answer_run(bulk)
    assert embedder.order == ["bulk text 0", "bulk text 2"], "two texts of 11 characters a call"
    single = [request("interactive", f"single text {n}") for n in range(4)]
    await requests.answer_run(single)
    assert embedder.order[2:] == ["single text 0"], "interactive requests keep whole calls"


async def test_a_lanes_fetches_are_tracked_apart_so_neither_cancels_the_others_work() -> None:
    embedder = GatedEmbedder()
    requests = EmbeddingRequests(embedder, batch_size=8)
    bulk_fetch = [request("bulk", "bulk one")]
    requests.prepare(bulk_fetch)
    await settle()
    requests.prepare([request("interactive", "a")])
    requests.prepare([request("interactive", "b")])
    requests.prepare([request("interactive", "c")])
    embedder.release.set()
    [answered] = await requests.answer_run(bulk_fetch)
    assert not isinstance(answered, BaseException)
    [answer] = answered
    assert answer.payload.request_id == "r_bulk_one"
    assert embedder.order.count("bulk one") == 1, "the bulk batch read ahead was kept"


async def test_a_cancelled_waiter_passes_its_turn_on() -> None:
    turns = ModelTurns()
    order: list[str] = []
    release = asyncio.Event()

    async def call(name: str, bulk: bool) -> None:
        async with turns.turn(bulk=bulk):
            order.append(name)
            await release.wait()

    first = asyncio.create_task(call("first", True))
    await settle()
    doomed = asyncio.create_task(call("doomed", False))
    last = asyncio.create_task(call("last", True))
    await settle()
    doomed.cancel()
    release.set()
    await asyncio.gather(first, last)
    assert doomed.cancelled()
    assert order == ["first", "last"]


async def test_with_a_model_of_its_own_the_bulk_lane_never_holds_up_an_interactive_request() -> (
    None
):
    shared, bulk_model = GatedEmbedder(), GatedEmbedder()
    shared.release.set()
    requests = EmbeddingRequests(shared, batch_size=1, bulk_embedder=bulk_model)
    requests.prepare([request("bulk", "bulk one"), request("bulk", "bulk two")])
    await settle()
    assert bulk_model.order == ["bulk one", "bulk two"], "the bulk model's calls, held"
    single = request("interactive", "single")
    [answered] = await requests.answer_run([single])
    assert not isinstance(answered, BaseException)
    assert shared.order == ["single"], "answered while the bulk call was still running"
    bulk_model.release.set()
    answers = await requests.answer_run([request("bulk", "bulk three")])
    assert not any(isinstance(answer, BaseException) for answer in answers)
    assert sorted(bulk_model.order) == ["bulk one", "bulk three", "bulk two"]
    assert shared.order == ["single"], "bulk texts never reach the interactive model"
