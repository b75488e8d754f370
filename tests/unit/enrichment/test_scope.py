"""A search by kind filters on one `scope` keyword (tenant and kind), every point written carries
it, and points written before it existed get it once, when the collection is opened."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from engram_embedders.hashing import HashingEmbedder
from engram_enrichment.adapters.vectors import (
    BACKFILL_BATCH,
    KEYWORD_INDEXES,
    SCOPE,
    KnowledgeVectors,
    candidate_filter,
    point_id,
    scope_groups,
)
from engram_vectors import (
    ExactNumpyStore,
    HybridHit,
    Listed,
    PayloadFilter,
    Point,
    SparseVector,
    VectorStore,
)
from engram_vectors.lexical import LEXICAL_ENCODER, document_vector
from engram_vectors.models import Payload, VectorLike
from tests.unit.enrichment.recall import harness, passages
from tests.unit.enrichment.test_passages import passage
from tests.unit.enrichment.test_search_reads import QUERY, TEXTS

pytestmark = pytest.mark.unit

COLLECTION = "knowledge"
EMBEDDER = HashingEmbedder(dimension=64)


async def unscoped(store: VectorStore, tenant_id: str, kind: str, count: int) -> list[str]:
    """Points as enrichment wrote them before `scope`: tenant, kind and ids, no scope."""
    p = EMBEDDER.provenance
    await store.ensure_collection(COLLECTION, p.dimension, p.fingerprint, lexical=LEXICAL_ENCODER)
    texts = [f"{kind} {n} of {tenant_id}: {TEXTS[n % len(TEXTS)]}" for n in range(count)]
    vectors = (await EMBEDDER.embed(texts)).vectors
    ids = [f"{kind[:3]}_{n}" for n in range(count)]
    points = [
        Point(
            point_id(tenant_id, item_id),
            vector,
            {
                "tenant_id": tenant_id,
                "kind": kind,
                "passage_id": item_id,
                "document_id": "doc_1",
                "text": text,
            },
            sparse=document_vector(text),
        )
        for item_id, text, vector in zip(ids, texts, vectors, strict=True)
    ]
    await store.upsert(COLLECTION, points)
    return ids


async def opened(store: VectorStore) -> KnowledgeVectors:
    vectors = KnowledgeVectors(store, COLLECTION)
    await vectors.open(EMBEDDER.provenance.dimension, EMBEDDER.provenance.fingerprint)
    return vectors


def test_kinds_named_filter_on_the_one_scope_condition_and_none_on_the_tenant() -> None:
    assert candidate_filter("tnt_a", ["passage"]) == {SCOPE: ["tnt_a:passage"]}
    assert candidate_filter("tnt_a", ["fact", "passage"]) == {
        SCOPE: ["tnt_a:fact", "tnt_a:passage"]
    }
    assert candidate_filter("tnt_a", None) == {"tenant_id": "tnt_a"}
    assert candidate_filter("tnt_a", []) == {"tenant_id": "tnt_a"}
    assert SCOPE in KEYWORD_INDEXES


class Recording(ExactNumpyStore):
    """The numpy store, keeping the filters each hybrid search was given."""

    def __init__(self) -> None:
        super().__init__()
        self.searched: list[tuple[PayloadFilter | None, PayloadFilter | None]] = []

    async def hybrid_search(
        self,
        name: str,
        *,
        vector: VectorLike,
        sparse: SparseVector | None,
        limit: int,
        filter: PayloadFilter | None = None,
        fingerprint: str | None = None,
        idf_filter: PayloadFilter | None = None,
        with_payload: bool = True,
    ) -> list[HybridHit]:
        self.searched.append((filter, idf_filter))
        return await super().hybrid_search(
            name,
            vector=vector,
            sparse=sparse,
            limit=limit,
            filter=filter,
            fingerprint=fingerprint,
            idf_filter=idf_filter,
            with_payload=with_payload,
        )


async def test_a_search_by_kind_passes_one_condition_and_word_weights_stay_the_tenants() -> None:
    store = Recording()
    h = await harness(KnowledgeVectors(store, COLLECTION))
    await h.passage(passage("psg_0", TEXTS[0], ["Returns"]))
    found = await h.search.search("tnt_a", QUERY, 2, min_score=-1.0, kinds=["passage"])
    await h.search.search("tnt_a", QUERY, 2, min_score=-1.0)
    assert [r["passage_id"] for r in passages(found.results)] == ["psg_0"]
    assert store.searched == [
        ({SCOPE: ["tnt_a:passage"]}, {"tenant_id": "tnt_a"}),
        ({"tenant_id": "tnt_a"}, {"tenant_id": "tnt_a"}),
    ]


async def test_every_point_written_carries_its_scope() -> None:
    h = await harness()
    await h.passage(passage("psg_0", TEXTS[0], ["Returns"]))
    (stored,) = await h.vectors.store.get(COLLECTION, [point_id("tnt_a", "psg_0")])
    assert stored.payload[SCOPE] == "tnt_a:passage"
    scopes = {
        item.payload["kind"]: item.payload[SCOPE]
        for item in await h.vectors.store.scroll(COLLECTION, limit=100)
    }
    assert scopes == {"passage": "tnt_a:passage"}


def test_points_are_grouped_by_the_scope_their_tenant_and_kind_give() -> None:
    listed = [
        Listed("tnt_a:f1", {"tenant_id": "tnt_a", "kind": "fact"}),
        Listed("tnt_b:p1", {"tenant_id": "tnt_b", "kind": "passage"}),
        Listed("tnt_a:f2", {"tenant_id": "tnt_a", "kind": "fact"}),
    ]
    assert scope_groups(listed) == {
        "tnt_a:fact": ["tnt_a:f1", "tnt_a:f2"],
        "tnt_b:passage": ["tnt_b:p1"],
    }


async def test_opening_a_collection_written_before_scope_backfills_it_once() -> None:
    store = ExactNumpyStore()
    mine = await unscoped(store, "tnt_a", "passage", BACKFILL_BATCH + 3)
    await unscoped(store, "tnt_b", "passage", 2)
    await unscoped(store, "tnt_a", "fact", 2)
    vectors = await opened(store)
    assert await store.count(COLLECTION, {SCOPE: "tnt_a:passage"}) == len(mine)
    assert await store.count(COLLECTION, {SCOPE: "tnt_b:passage"}) == 2
    assert await store.count(COLLECTION, {SCOPE: "tnt_a:fact"}) == 2
    query = (await EMBEDDER.embed([TEXTS[1]])).vectors[0]
    hits = await vectors.candidates(
        "tnt_a", query, None, 10, fingerprint=EMBEDDER.provenance.fingerprint, kinds=["passage"]
    )
    assert len(hits) == 10 and all(hit.payload["passage_id"] in mine for hit in hits)
    assert await vectors.backfill_scope() == 0, "nothing left to scope"


class FailingAfter(ExactNumpyStore):
    """The numpy store, whose payload writes fail once `allowed` of them have landed."""

    def __init__(self, allowed: int) -> None:
        super().__init__()
        self.allowed = allowed

    async def set_payload(self, name: str, ids: Sequence[str], fields: Payload) -> None:
        if self.allowed == 0:
            raise ConnectionError("the engine went away")
        self.allowed -= 1
        await super().set_payload(name, ids, fields)


async def test_a_backfill_cut_short_is_finished_by_the_next_open() -> None:
    store = FailingAfter(allowed=1)
    await unscoped(store, "tnt_a", "passage", BACKFILL_BATCH + 5)
    with pytest.raises(ConnectionError):
        await opened(store)
    assert await store.count(COLLECTION, {SCOPE: "tnt_a:passage"}) == BACKFILL_BATCH
    store.allowed = 10
    vectors = await opened(store)
    assert await store.count(COLLECTION, {SCOPE: "tnt_a:passage"}) == BACKFILL_BATCH + 5
    assert await vectors.backfill_scope() == 0


class IgnoringWrites(ExactNumpyStore):
    """The numpy store, dropping payload writes: a backfill must not loop on it."""

    async def set_payload(self, name: str, ids: Sequence[str], fields: Payload) -> None:
        return None


async def test_a_backfill_whose_writes_do_not_land_stops_after_one_round() -> None:
    store = IgnoringWrites()
    await unscoped(store, "tnt_a", "passage", 3)
    vectors = await opened(store)
    assert await store.count(COLLECTION, {SCOPE: "tnt_a:passage"}) == 0
    assert await vectors.backfill_scope() == 3
