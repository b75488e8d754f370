"""On the embedded Qdrant engine: a knowledge collection written before `scope` existed is
scoped when enrichment opens it again, and its passages are then found by kind."""

from __future__ import annotations

from pathlib import Path

from engram_enrichment.adapters.vectors import SCOPE
from engram_vectors import Exists, QdrantEdgeStore
from tests.unit.enrichment.test_scope import COLLECTION, EMBEDDER, opened, unscoped
from tests.unit.enrichment.test_search_reads import TEXTS


async def test_an_unscoped_shard_is_backfilled_on_open_and_searchable_by_kind(
    tmp_path: Path,
) -> None:
    store = QdrantEdgeStore(tmp_path / "vectors", keyword_indexes=("tenant_id", "kind"))
    mine = await unscoped(store, "tnt_a", "passage", 700)
    await unscoped(store, "tnt_b", "passage", 5)
    await unscoped(store, "tnt_a", "fact", 5)
    await store.close()

    reopened = QdrantEdgeStore(tmp_path / "vectors", keyword_indexes=("tenant_id", "kind", SCOPE))
    try:
        vectors = await opened(reopened)
        assert await reopened.count(COLLECTION, {SCOPE: Exists(False)}) == 0
        assert await reopened.count(COLLECTION, {SCOPE: "tnt_a:passage"}) == len(mine)
        assert await reopened.count(COLLECTION, {SCOPE: "tnt_b:passage"}) == 5
        query = (await EMBEDDER.embed([TEXTS[2]])).vectors[0]
        hits = await vectors.candidates(
            "tnt_a",
            query,
            None,
            20,
            fingerprint=EMBEDDER.provenance.fingerprint,
            kinds=["passage"],
        )
        assert len(hits) == 20
        assert all(hit.payload["passage_id"] in mine for hit in hits)
        assert all(hit.payload["tenant_id"] == "tnt_a" for hit in hits)
        assert await vectors.backfill_scope() == 0
    finally:
        await reopened.close()

    again = QdrantEdgeStore(tmp_path / "vectors", keyword_indexes=("tenant_id", "kind", SCOPE))
    try:
        assert await again.count(COLLECTION, {SCOPE: "tnt_a:passage"}) == len(mine), "durable"
    finally:
        await again.close()
