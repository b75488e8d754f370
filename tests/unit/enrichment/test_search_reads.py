"""What a knowledge search reads besides the vectors: the rows of its top passages only (the next
ones when a top passage is gone), and payload filters only on keyword-indexed fields."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engram_enrichment.adapters.vectors import KEYWORD_INDEXES, KnowledgeVectors
from engram_vectors import ExactNumpyStore, HybridHit, PayloadFilter, SparseVector
from engram_vectors.models import VectorLike
from tests.unit.enrichment.recall import harness, passages
from tests.unit.enrichment.test_passages import passage

pytestmark = pytest.mark.unit

TEXTS = [
    "Returns are accepted within 30 days of delivery with the receipt.",
    "Opened electronics can be returned within 14 days of delivery.",
    "Damaged items must be reported within 48 hours with a photo.",
    "Refunds reach the original payment method within 5 working days.",
    "Exchanges for another size are free within 30 days of delivery.",
    "Gift cards and downloadable software cannot be returned.",
]
QUERY = "returned within days of delivery"


async def indexed() -> Any:
    h = await harness()
    await h.passage(
        *[
            passage(f"psg_{n}", text, ["Returns"], start=n * 100, page=n + 1)
            for n, text in enumerate(TEXTS)
        ]
    )
    h.passages.reads.clear()
    return h


async def test_only_the_top_passages_rows_are_read_in_one_read() -> None:
    h = await indexed()
    found = await h.search.search("tnt_a", QUERY, 2, min_score=-1.0, kinds=["passage"])
    assert len(passages(found.results)) == 2
    assert h.passages.reads == [[r["passage_id"] for r in found.results]]


async def test_a_top_passage_whose_row_is_gone_is_replaced_by_the_next_one() -> None:
    h = await indexed()
    before = await h.search.search("tnt_a", QUERY, 2, min_score=-1.0, kinds=["passage"])
    gone = before.results[0]["passage_id"]
    del h.passages.rows[f"tnt_a:{gone}"]
    h.passages.reads.clear()
    after = await h.search.search("tnt_a", QUERY, 2, min_score=-1.0, kinds=["passage"])
    ids = [r["passage_id"] for r in after.results]
    assert len(ids) == 2 and gone not in ids and ids[0] == before.results[1]["passage_id"]
    assert len(h.passages.reads) == 2
    cited = after.results[0]
    n = int(cited["passage_id"].rsplit("_", 1)[-1])
    assert cited["page"] == n + 1 and cited["heading_path"] == ["Returns"]
    assert cited["span"] == {"start": n * 100, "end": n * 100 + len(TEXTS[n])}
    assert cited["document_id"] == "doc_1" and cited["version"] == "v1"


class FilterRecordingStore(ExactNumpyStore):
    """The numpy store, noting the payload fields every filtered call names."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: set[str] = set()

    def _note(self, *filters: PayloadFilter | None) -> None:
        for payload_filter in filters:
            self.keys.update(payload_filter or {})

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
        self._note(filter, idf_filter)
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

    async def delete_by_filter(self, name: str, filter: PayloadFilter) -> None:
        self._note(filter)
        await super().delete_by_filter(name, filter)

    async def count(self, name: str, filter: PayloadFilter | None = None) -> int:
        self._note(filter)
        return await super().count(name, filter)


async def test_every_payload_filter_names_only_keyword_indexed_fields() -> None:
    """The embedded engine checks an unindexed field point by point, on every query."""
    store = FilterRecordingStore()
    h = await harness(KnowledgeVectors(store, "knowledge"))
    await h.passage(passage("psg_0", TEXTS[0], ["Returns"]))
    await h.search.search("tnt_a", QUERY, 2, min_score=-1.0, kinds=["passage", "fact"])
    await h.search.search("tnt_a", QUERY, 2, min_score=-1.0)
    ids: Sequence[str] = ["doc_1"]
    assert await h.vectors.count_passages_of("tnt_a", ids) == 1
    await h.vectors.remove_passages_of("tnt_a", "doc_1")
    assert store.keys and store.keys <= set(KEYWORD_INDEXES)
