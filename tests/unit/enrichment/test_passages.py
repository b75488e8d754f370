"""Passages in knowledge search: kept, embedded with their heading path, found with their
citation, narrowed by `kinds`, never stored for text they no longer hold, and withdrawn with
their vectors (a prune job acknowledged and verified)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any, Literal

import httpx
import pytest
from fastapi import FastAPI

from engram_enrichment.api.dependencies import EnrichmentDeps
from engram_enrichment.api.prune import router as prune_router
from engram_enrichment.service.resolution import Resolutions
from engram_events import Envelope, new_event
from engram_events.catalog import PASSAGE_UPSERTED, PASSAGES_WITHDRAWN
from engram_events.payloads.passages import PassagesWithdrawn, PassageUpserted
from engram_platform.dependencies import install
from tests.support.internal import accept_internal_calls, internal_headers
from tests.unit.enrichment.fakes import StagedEvents
from tests.unit.enrichment.recall import facts, harness, passages
from tests.unit.enrichment.scenario import upserted

pytestmark = pytest.mark.unit


def passage(
    passage_id: str,
    text: str,
    heading_path: list[str],
    *,
    start: int = 0,
    tenant: str = "tnt_a",
    page: int | None = None,
) -> Envelope[Any]:
    payload = PassageUpserted(
        passage_id=passage_id,
        document_id="doc_1",
        version="v1",
        name="returns.md",
        ordinal=int(passage_id.rsplit("_", 1)[-1]),
        heading_path=heading_path,
        start=start,
        end=start + len(text),
        page=page,
        page_end=page,
        text=text,
        text_sha256=hashlib.sha256(text.encode()).hexdigest(),
    )
    return new_event(PASSAGE_UPSERTED, payload, tenant_id=tenant)


RETURNS = passage(
    "psg_0",
    "You may return most items within 30 days. Opened electronics can be returned within 14 days.",
    ["Returns policy"],
    start=18,
)
DAMAGED = passage(
    "psg_1",
    "If an item arrives damaged, contact us within 48 hours with a photo.",
    ["Returns policy", "Damaged goods"],
    start=140,
)


async def test_a_passage_is_embedded_with_its_heading_path_and_found_with_its_citation() -> None:
    h = await harness()
    published = await h.passage(RETURNS, DAMAGED)
    requests = [e.payload for e in published if e.event_type == "embedding.bulk_requested"]
    assert [r.purpose for r in requests] == ["passage", "passage"]
    assert requests[1].items[0].text.startswith("Returns policy > Damaged goods\n\nIf an item")
    found = await h.search.search("tnt_a", "opened electronics return 14 days", 5, min_score=-1.0)
    top = found.results[0]
    assert top["kind"] == "passage" and top["passage_id"] == "psg_0"
    assert top["document_id"] == "doc_1" and top["version"] == "v1"
    assert top["name"] == "returns.md" and top["heading_path"] == ["Returns policy"]
    assert top["span"] == {"start": 18, "end": 18 + len(RETURNS.payload.text)}
    assert top["text"] == RETURNS.payload.text
    assert "scores" in top and top["page"] is None


async def test_kinds_narrow_the_search_to_passages_or_to_facts() -> None:
    h = await harness()
    await h.passage(RETURNS)
    await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    only = await h.search.search("tnt_a", "hq Berlin", 10, min_score=-1.0, kinds=["passage"])
    assert {r["kind"] for r in only.results} == {"passage"}
    none = await h.search.search("tnt_a", "return items", 10, min_score=-1.0, kinds=["fact"])
    assert none.results and passages(none.results) == [] and facts(none.results)


async def test_a_replayed_passage_writes_one_row_and_one_point() -> None:
    h = await harness()
    first = await h.passage(RETURNS)
    again = await h.passage(RETURNS)
    assert [e.event_id for e in again] == [e.event_id for e in first]
    assert len(h.passages.rows) == 1
    found = await h.search.search("tnt_a", "return", 10, min_score=-1.0, kinds=["passage"])
    assert len(found.results) == 1


async def test_a_vector_for_text_the_passage_no_longer_holds_is_not_stored() -> None:
    h = await harness()
    published = await h.passage(RETURNS, embed=False)
    held = h.passages.rows["tnt_a:psg_0"]
    changed = held.passage.model_copy(update={"text_sha256": "f" * 64})
    h.passages.rows["tnt_a:psg_0"] = replace(held, passage=changed)
    await h.embed(published)
    found = await h.search.search("tnt_a", "return", 10, min_score=-1.0, kinds=["passage"])
    assert found.results == []


async def test_other_tenants_passages_are_never_returned() -> None:
    h = await harness()
    await h.passage(passage("psg_0", "Opened electronics: 14 days.", [], tenant="tnt_b"))
    assert (await h.search.search("tnt_a", "electronics", 5, min_score=-1.0)).results == []


def withdrawn(
    ids: list[str],
    reason: Literal["new_version", "document_deleted"] = "document_deleted",
    prune_job_id: str | None = "job_1",
) -> Envelope[Any]:
    payload = PassagesWithdrawn(
        document_id="doc_1",
        passage_ids=ids,
        reason=reason,
        prune_job_id=prune_job_id,
    )
    return new_event(PASSAGES_WITHDRAWN, payload, tenant_id="tnt_a")


async def test_a_deleted_document_takes_its_passages_rows_and_vectors_and_acknowledges() -> None:
    h = await harness()
    await h.passage(RETURNS, DAMAGED)
    assert await h.vectors.count_passages_of("tnt_a", ["doc_1"]) == 2
    (ack,) = await h.handlers.on_passages_withdrawn(withdrawn(["psg_0", "psg_1"]))
    assert ack.event_type == "tombstone.applied"
    assert ack.payload.service == "enrichment" and ack.payload.source_ids == ["doc_1"]
    assert ack.payload.tombstoned_ids == [], "nothing more for memory to cover"
    assert h.passages.rows == {}
    assert await h.vectors.count_passages_of("tnt_a", ["doc_1"]) == 0
    assert (await h.search.search("tnt_a", "return", 5, min_score=-1.0)).results == []


async def test_a_vector_computed_after_the_withdrawal_is_not_kept() -> None:
    h = await harness()
    published = await h.passage(RETURNS, embed=False)
    await h.handlers.on_passages_withdrawn(withdrawn(["psg_0"], "new_version", None))
    await h.embed(published)
    assert await h.vectors.count_passages_of("tnt_a", ["doc_1"]) == 0


async def test_prune_verification_counts_a_deleted_documents_passages_and_vectors() -> None:
    h = await harness()
    await h.passage(RETURNS)
    deps = EnrichmentDeps(
        knowledge=h.knowledge,
        resolutions=Resolutions(h.knowledge, None, StagedEvents()),
        passages=h.passages,
        vectors=h.vectors,
    )
    app = FastAPI()
    accept_internal_calls(app)
    app.include_router(prune_router)
    install(app, deps)
    transport = httpx.ASGITransport(app=app)
    body = {"records": [], "facts": [], "documents": ["doc_1"]}
    async with httpx.AsyncClient(transport=transport, base_url="http://enrichment") as client:
        before = await client.post(
            "/internal/v1/prune/verify", json=body, headers=internal_headers("tnt_a")
        )
        await h.handlers.on_passages_withdrawn(withdrawn(["psg_0"]))
        after = await client.post(
            "/internal/v1/prune/verify", json=body, headers=internal_headers("tnt_a")
        )
    left = [r.json()["references"] for r in (before, after)]
    assert [(refs["passages"], refs["passage_vectors"]) for refs in left] == [(1, 1), (0, 0)]
