"""A new version of a document re-embeds only its changed passages: a passage whose heading path
and text equal those of a passage of the previous version (same document, same embedder) gets a
copy of that vector instead of an embedding request; without a stored vector to copy, the
embedding is requested as before."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import PASSAGE_UPSERTED, PASSAGES_WITHDRAWN
from engram_events.payloads.passages import PassagesWithdrawn, PassageUpserted
from tests.unit.enrichment.recall import Harness, harness

pytestmark = pytest.mark.unit

SECTIONS = [
    (["Returns"], "You may return most items within 30 days of delivery."),
    (["Returns", "Damaged goods"], "Report damage within 48 hours with a photo."),
    (["Shipping"], "Parcels leave the warehouse within two working days."),
]


def version(
    name: str,
    sections: list[tuple[list[str], str]],
    *,
    document: str = "doc_1",
    tenant: str = "tnt_a",
) -> list[Envelope[Any]]:
    events = []
    for n, (path, text) in enumerate(sections):
        payload = PassageUpserted(
            passage_id=f"psg_{document}_{name}_{n}",
            document_id=document,
            version=name,
            name="policy.md",
            ordinal=n,
            heading_path=path,
            start=n * 100,
            end=n * 100 + len(text),
            text=text,
            text_sha256=hashlib.sha256(text.encode()).hexdigest(),
        )
        events.append(new_event(PASSAGE_UPSERTED, payload, tenant_id=tenant))
    return events


def requested_ids(published: list[Envelope[Any]]) -> list[str]:
    return [
        item.item_id.rsplit(":", 1)[0]
        for e in published
        if e.event_type == "embedding.bulk_requested"
        for item in e.payload.items
    ]


async def vector_of(h: Harness, passage_id: str, tenant: str = "tnt_a") -> list[float]:
    [point] = await h.vectors.passage_points(tenant, [passage_id])
    return list(point.vector)


def replaced(old: list[Envelope[Any]], new_version: str) -> Envelope[Any]:
    payload = PassagesWithdrawn(
        document_id="doc_1",
        passage_ids=[e.payload.passage_id for e in old],
        reason="new_version",
        version=new_version,
    )
    return new_event(PASSAGES_WITHDRAWN, payload, tenant_id="tnt_a")


async def test_a_new_version_requests_embeddings_only_for_its_changed_passages() -> None:
    h = await harness()
    first = version("v1", SECTIONS)
    await h.passage(*first)
    changed = [SECTIONS[0], (SECTIONS[1][0], "Report damage within 7 days."), SECTIONS[2]]
    second = version("v2", changed)
    published = await h.passage(*second)
    assert requested_ids(published) == ["psg_doc_1_v2_1"]
    assert h.handlers.passages is not None
    assert h.handlers.passages.counts == {"requested": 4, "reused": 2}
    assert await vector_of(h, "psg_doc_1_v2_0") == await vector_of(h, "psg_doc_1_v1_0")

    await h.handlers.on_passages_withdrawn(replaced(first, "v2"))
    found = await h.search.search("tnt_a", "report damage", 10, min_score=-1.0)
    assert sorted(r["passage_id"] for r in found.results) == [e.payload.passage_id for e in second]
    assert "Report damage within 7 days." in [r["text"] for r in found.results]


async def test_the_same_text_under_another_heading_is_embedded_again() -> None:
    h = await harness()
    await h.passage(*version("v1", SECTIONS))
    moved = [(["Policy", *path], text) for path, text in SECTIONS]
    published = await h.passage(*version("v2", moved))
    assert len(requested_ids(published)) == 3


async def test_without_a_stored_vector_to_copy_the_embedding_is_requested() -> None:
    h = await harness()
    first = version("v1", SECTIONS)
    await h.passage(*first, embed=False)
    published = await h.passage(*version("v2", SECTIONS))
    assert len(requested_ids(published)) == 3, "the first version's vectors never came"

    h = await harness()
    await h.passage(*first)
    await h.handlers.on_passages_withdrawn(replaced(first, "v2"))
    published = await h.passage(*version("v2", SECTIONS))
    assert len(requested_ids(published)) == 3, "the first version was withdrawn already"


async def test_vectors_are_never_copied_across_documents_or_tenants() -> None:
    h = await harness()
    await h.passage(*version("v1", SECTIONS))
    other_document = await h.passage(*version("v1", SECTIONS, document="doc_2"))
    other_tenant = await h.passage(*version("v2", SECTIONS, tenant="tnt_b"))
    assert len(requested_ids(other_document)) == 3
    assert len(requested_ids(other_tenant)) == 3


async def test_a_vector_another_embedder_computed_is_not_copied() -> None:
    h = await harness()
    await h.passage(*version("v1", SECTIONS[:1]))
    foreign = {"fingerprint": "another-embedder", "model_id": "other"}
    await h.vectors.store.set_payload(
        h.vectors.collection, ["tnt_a:psg_doc_1_v1_0"], {"provenance": foreign}
    )
    published = await h.passage(*version("v2", SECTIONS[:1]))
    assert requested_ids(published) == ["psg_doc_1_v2_0"]
