"""The `embedding.computed` batch route stores what the single route would, input by input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.service.announce import parse_section_item
from engram_events import Envelope
from engram_vectors import ExactNumpyStore, Point
from tests.unit.enrichment.recall import Harness, harness
from tests.unit.enrichment.scenario import upserted

pytestmark = pytest.mark.unit


def _fact_ids(computed: Envelope[Any]) -> list[str]:
    return [item.item_id for item in computed.payload.items]


async def _requests(h: Harness, record: Envelope[Any]) -> list[Envelope[Any]]:
    published = await h.handlers.on_record_upserted(record)
    return [e for e in published if e.event_type == "embedding.bulk_requested"]


async def test_live_facts_of_every_tenant_are_stored_and_withdrawn_ones_are_not() -> None:
    h = await harness()
    first = await _requests(h, upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
    other = await _requests(h, upserted("rec_b", 1, {"hq": "Paris"}, tenant="tnt_b"))
    moved = await _requests(h, upserted("rec_c", 1, {"hq": "Rome"}, entity_id="carrier:c2"))
    await h.handlers.on_record_upserted(
        upserted("rec_c", 2, {"hq": "Oslo"}, entity_id="carrier:c2")
    )
    computed = [await h.computed(r) for r in first + other + moved]
    foreign = computed[0].model_copy(
        update={"payload": computed[0].payload.model_copy(update={"requester": "memory"})}
    )

    results = await h.handlers.on_embedding_computed_batch([*computed, foreign])

    assert results == [[] for _ in range(len(computed) + 1)]
    facts = [c for c in computed if c.payload.purpose == "fact"]
    stored_a = await h.vectors.payloads("tnt_a", [i for c in facts for i in _fact_ids(c)])
    stored_b = await h.vectors.payloads("tnt_b", [i for c in facts for i in _fact_ids(c)])
    assert sorted(p["fact_id"] for p in stored_a) == sorted(_fact_ids(facts[0]))
    assert _fact_ids(facts[2]) and not set(_fact_ids(facts[2])) & {
        p["fact_id"] for p in stored_a
    }, "rec_c's Rome fact was withdrawn by its second revision before its vector came"
    assert [p["fact_id"] for p in stored_b] == _fact_ids(facts[1])
    assert all(p["provenance"]["model_id"] == h.embedder.provenance.model_id for p in stored_a)
    sections = [c for c in computed if c.payload.purpose == "article_section"]
    section_ids = [parse_section_item(i)[0] for c in sections for i in _fact_ids(c)]
    assert section_ids and await h.vectors.payloads("tnt_a", section_ids), "sections stored too"


class _Failing(ExactNumpyStore):
    """A vector store whose upserts fail for one tenant's points."""

    async def upsert(
        self, name: str, points: Sequence[Point], *, fingerprint: str | None = None
    ) -> None:
        if any(p.payload.get("tenant_id") == "tnt_b" for p in points):
            raise ConnectionError("vector store unavailable")
        await super().upsert(name, points, fingerprint=fingerprint)


async def test_a_tenant_whose_write_fails_fails_only_its_own_inputs() -> None:
    h = await harness(KnowledgeVectors(_Failing(), "knowledge"))
    mine = await _requests(h, upserted("rec_a", 1, {"hq": "Berlin"}))
    theirs = await _requests(h, upserted("rec_b", 1, {"hq": "Paris"}, tenant="tnt_b"))
    facts = [await h.computed(r) for r in mine + theirs if r.payload.purpose == "fact"]

    results = await h.handlers.on_embedding_computed_batch(facts)

    assert results[0] == [] and isinstance(results[1], ConnectionError)
    assert [p["fact_id"] for p in await h.vectors.payloads("tnt_a", _fact_ids(facts[0]))] == (
        _fact_ids(facts[0])
    )
    with pytest.raises(ConnectionError):
        await h.handlers.on_embedding_computed(facts[1])
