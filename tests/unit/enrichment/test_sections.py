"""Article sections: embedded per attribute, found by search, replaced or removed with the facts."""

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from engram_enrichment.adapters.vectors import KnowledgeVectors
from engram_enrichment.domain.sections import current_sections, render_section, section_id
from engram_enrichment.service.announce import section_item_id
from engram_enrichment.service.verify import sections_citing
from engram_events.payloads.embeddings import EmbeddedItem
from engram_vectors import ExactNumpyStore
from tests.unit.enrichment.recall import Harness, harness, sections
from tests.unit.enrichment.scenario import tombstoned, upserted

pytestmark = pytest.mark.unit
HQ = section_id("carrier:c1", "hq")


def requests(published: list[Any], purpose: str) -> list[Any]:
    return [
        e
        for e in published
        if e.event_type == "embedding.bulk_requested" and e.payload.purpose == purpose
    ]


async def section_payload(h: Harness, sid: str = HQ) -> dict[str, Any] | None:
    found = await h.vectors.payloads("tnt_a", [sid])
    return found[0] if found else None


async def test_each_attribute_section_is_embedded_and_found_with_its_facts() -> None:
    h = await harness()
    published = await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
    (request,) = requests(published, "article_section")
    assert sorted(i.item_id.rsplit("@", 1)[0] for i in request.payload.items) == sorted(
        [section_id("carrier:c1", "fleet"), HQ]
    )
    found = await h.search.search("tnt_a", "carrier:c1: hq Berlin", 10, min_score=-1.0)
    (hit,) = [r for r in sections(found.results) if r["section_id"] == HQ]
    assert hit["entity_id"] == "carrier:c1" and hit["status"] == "active"
    assert [(f["value"], f["status"]) for f in hit["facts"]] == [("Berlin", "active")]
    assert [s["record_id"] for s in hit["facts"][0]["support"]] == ["rec_a"]
    assert "`rec_a` rev 1" in hit["markdown"]
    assert hit["embedded_text_sha256"] == hit["text_sha256"]
    payload = await section_payload(h)
    assert payload is not None and payload["record_ids"] == ["rec_a"]
    assert set(payload) == {
        "tenant_id",
        "entity_id",
        "kind",
        "scope",
        "section_id",
        "text_sha256",
        "fact_ids",
        "record_ids",
        "provenance",
        "text",
    }, "ids, hashes and the embedded text (identifier matches need it), never the Markdown"
    assert payload["text"] == "carrier:c1 (carrier), hq: Berlin"
    assert payload["provenance"]["fingerprint"] == h.embedder.provenance.fingerprint
    assert hit["provenance"]["model_id"] == h.embedder.provenance.model_id, "as the embedder said"


async def test_the_floor_applies_to_section_hits_and_counts_them() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
    raw = await h.search.search("tnt_a", "hq Berlin", 10, min_score=-1.0)
    floor = max(r["score"] for r in raw.results) + 0.001
    floored = await h.search.search("tnt_a", "hq Berlin", 10, min_score=floor)
    assert floored.results == [] and floored.dropped_below_floor == len(raw.results) == 4


async def test_a_regenerated_section_gets_a_new_vector_and_a_stale_result_is_ignored() -> None:
    h = await harness()
    first = await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    (old_request,) = requests(first, "article_section")
    before = await section_payload(h)
    await h.record(upserted("rec_b", 1, {"hq": "Munich"}, minute=1))
    after = await section_payload(h)
    assert before and after and after["text_sha256"] != before["text_sha256"]
    assert after["record_ids"] == ["rec_a", "rec_b"]
    await h.handlers.on_embedding_computed(await h.computed(old_request))
    assert (await section_payload(h)) == after, "a result for old text does not overwrite"
    (hit,) = [
        r
        for r in sections((await h.search.search("tnt_a", "hq", 10, min_score=-1.0)).results)
        if r["section_id"] == HQ
    ]
    assert hit["contested"] and hit["status"] == "contested"


async def test_a_tombstone_drops_the_citing_vector_at_once_and_re_embeds_the_section() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
    await h.record(upserted("rec_b", 1, {"hq": "Munich"}, minute=1))
    cited = await h.knowledge.load("tnt_a", "carrier:c1")
    assert cited is not None and sections_citing(cited, {"rec_b"}) == 1
    assert h.handlers.sections is not None
    assert await h.handlers.sections.citing(cited, ["rec_b"]) == [HQ]
    published = await h.tombstone(tombstoned("rec_b", prune_job_id="job_1"), embed=False)
    assert await section_payload(h) is None, "the vector citing rec_b is gone before the ack"
    fleet = await section_payload(h, section_id("carrier:c1", "fleet"))
    assert fleet is not None, "sections that never cited rec_b keep their vectors"
    entity = await h.knowledge.load("tnt_a", "carrier:c1")
    assert entity is not None and sections_citing(entity, {"rec_b"}) == 0
    assert "rec_b" not in render_section(entity, "hq")
    assert await h.handlers.sections.citing(entity, ["rec_b"]) == []
    await h.embed(published)
    payload = await section_payload(h)
    assert payload is not None and payload["record_ids"] == ["rec_a"]
    assert payload["text_sha256"] == entity.sections[HQ].text_sha256


async def test_an_entity_without_facts_loses_its_sections_and_their_vectors() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin", "fleet": 12}))
    await h.tombstone(tombstoned("rec_a"))
    entity = await h.knowledge.load("tnt_a", "carrier:c1")
    assert entity is not None and current_sections(entity) == {}
    assert {s.status for s in entity.sections.values()} == {"removed"}
    ids = sorted(entity.sections)
    assert await h.vectors.payloads("tnt_a", ids) == []
    found = await h.search.search("tnt_a", "carrier:c1 hq Berlin", 10, min_score=-1.0)
    assert found.results == []


async def test_a_section_result_for_another_text_hash_is_not_stored() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    entity = await h.knowledge.load("tnt_a", "carrier:c1")
    assert entity is not None
    section = entity.sections[HQ].model_copy(update={"text_sha256": "0" * 64})
    item = EmbeddedItem(item_id=section_item_id(section), vector=[1.0] * 64)
    assert h.handlers.sections is not None
    assert await h.handlers.sections.store("tnt_a", [item], h.embedder.provenance.fingerprint) == 0


async def test_replaying_a_record_requests_no_section_embeddings() -> None:
    h = await harness()
    await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    again = await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    assert requests(again, "article_section") == []


class ChangeBeforePut(KnowledgeVectors):
    """Runs one change between the section check and the write: the race a consumer can lose."""

    def __init__(self) -> None:
        super().__init__(ExactNumpyStore(), "knowledge")
        self.before_put: Callable[[], Awaitable[Any]] | None = None

    async def put_sections(self, *args: Any, **kwargs: Any) -> None:
        hook, self.before_put = self.before_put, None
        if hook is not None:
            await hook()
        await super().put_sections(*args, **kwargs)


async def test_a_vector_overtaken_by_a_tombstone_while_written_is_deleted() -> None:
    vectors = ChangeBeforePut()
    h = await harness(vectors)
    await h.record(upserted("rec_a", 1, {"hq": "Berlin"}))
    published = await h.handlers.on_record_upserted(
        upserted("rec_b", 1, {"hq": "Munich"}, minute=1)
    )
    (request,) = requests(published, "article_section")
    vectors.before_put = lambda: h.tombstone(tombstoned("rec_b"), embed=False)
    assert h.handlers.sections is not None
    stored = await h.handlers.sections.store(
        "tnt_a", (await h.computed(request)).payload.items, h.embedder.provenance.fingerprint
    )
    assert stored == 0
    entity = await h.knowledge.load("tnt_a", "carrier:c1")
    assert entity is not None and await h.handlers.sections.citing(entity, ["rec_b"]) == []
