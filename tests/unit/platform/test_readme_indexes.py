"""The README's index table lists exactly the indexes the services declare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram_enrichment.adapters.passages import INDEXES as ENRICHMENT_PASSAGE_INDEXES
from engram_enrichment.adapters.relations import INDEXES as ENRICHMENT_RELATION_INDEXES
from engram_enrichment.adapters.store import INDEXES as ENRICHMENT_INDEXES
from engram_extraction.adapters import passages as extraction_passages
from engram_extraction.adapters import store as extraction
from engram_extraction.adapters import types as extraction_types
from engram_gateway.adapters import prune_jobs, registry
from engram_ingest.adapters import store as ingest
from engram_memory.adapters import rows as memory
from engram_platform import audit, idempotency, outbox
from engram_platform.consuming import parked_store
from engram_platform.indexes import Indexes, index_keys, merge, ttl_of

pytestmark = pytest.mark.unit

README = Path(__file__).resolve().parents[3] / "README.md"
DECLARED: dict[str, Indexes] = {
    "every service": merge(idempotency.INDEXES, outbox.INDEXES, parked_store.INDEXES),
    "gateway": merge(registry.INDEXES, prune_jobs.INDEXES, audit.INDEXES),
    "ingest": ingest.INDEXES,
    "extraction": merge(extraction.INDEXES, extraction_passages.INDEXES, extraction_types.INDEXES),
    "enrichment": merge(
        ENRICHMENT_INDEXES, ENRICHMENT_PASSAGE_INDEXES, ENRICHMENT_RELATION_INDEXES
    ),
    "memory": merge(memory.INDEXES, audit.INDEXES),
}


def declared_rows() -> set[tuple[str, str, str]]:
    rows = set()
    for service, declared in DECLARED.items():
        for collection, models in declared.items():
            for model in models:
                keys = ", ".join(f"{k}{' desc' if d < 0 else ''}" for k, d in index_keys(model))
                days = ttl_of(model)
                keys += f" (TTL {days // 86400} days)" if days else ""
                rows.add((service, collection, keys))
    return rows


def readme_rows() -> set[tuple[str, str, str]]:
    section = README.read_text().split("## Indexes", 1)[1].split("\n## ", 1)[0]
    pattern = re.compile(r"^\| ([^|]+?) \| `(\w+)`[^|]* \| `([^`]+)`( \([^)]*\))? \|", re.M)
    return {
        (service, collection, keys + (ttl or ""))
        for service, collection, keys, ttl in pattern.findall(section)
    }


def test_the_readme_lists_every_declared_index() -> None:
    assert readme_rows() == declared_rows()
