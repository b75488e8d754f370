"""A passage row crosses the store typed: what is stored reads back the same, keyed by tenant."""

from __future__ import annotations

import pytest

from engram_enrichment.adapters.passages import passage_doc, passage_row
from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.domain.passages import passage_result
from engram_events.payloads.passages import PassageUpserted

pytestmark = pytest.mark.unit

ROW = PassageRow(
    "tnt_a",
    PassageUpserted(
        passage_id="psg_1",
        document_id="doc_1",
        version="v2",
        name="returns.pdf",
        ordinal=3,
        heading_path=["Policy", "Returns"],
        start=120,
        end=180,
        page=2,
        page_end=3,
        text="Items may be returned within 30 days.",
        text_sha256="ab" * 32,
    ),
    "cd" * 32,
)


def test_a_stored_passage_reads_back_as_it_was_written_under_its_tenants_key() -> None:
    doc = passage_doc(ROW)
    assert (doc["_id"], doc["tenant_id"]) == ("tnt_a:psg_1", "tnt_a")
    assert passage_row(doc) == ROW


def test_a_passage_hit_cites_its_document_version_headings_pages_and_span() -> None:
    cited = passage_result(ROW)
    assert cited["document_id"] == "doc_1" and cited["version"] == "v2"
    assert cited["heading_path"] == ["Policy", "Returns"]
    assert (cited["page"], cited["page_end"]) == (2, 3)
    assert cited["span"] == {"start": 120, "end": 180}
