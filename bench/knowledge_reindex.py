"""A knowledge reindex's rate, and search during it: enrichment's own reindexer, in process.

Run: python bench/knowledge_reindex.py [--entities 2000] [--passages 2000] [--source minilm]
[--target bge-small]. Records (two attributes each: two facts and two sections) and passages go
through enrichment's handlers into a fresh database at MONGODB_URI, their vectors computed with
the source embedder into a source collection (the embedded engine, a temporary directory); then
the reindexer walks entities and passages into a collection for the target embedder, verifies
and switches, while a search runs every 50 ms. Prints items/s and writes
bench-results/knowledge_reindex.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embedders_vectors import sentences  # noqa: E402
from bench.memory_reindex import RESULTS, asked_throughout, embedder  # noqa: E402
from engram_embedders import Embedder  # noqa: E402
from engram_embedders.moving import Embedded, ReindexDocument  # noqa: E402
from engram_embedders.reindex import Space  # noqa: E402
from engram_enrichment.adapters.passages import MongoPassageRows  # noqa: E402
from engram_enrichment.adapters.reindex import REINDEX, STORE, KnowledgeWalkStore  # noqa: E402
from engram_enrichment.adapters.store import MongoEntityStore  # noqa: E402
from engram_enrichment.adapters.vectors import KEYWORD_INDEXES, KnowledgeVectors  # noqa: E402
from engram_enrichment.domain.schema import Schema  # noqa: E402
from engram_enrichment.handlers import EnrichmentHandlers  # noqa: E402
from engram_enrichment.service.knowledge import KnowledgeBase  # noqa: E402
from engram_enrichment.service.moving import MovingKnowledge  # noqa: E402
from engram_enrichment.service.reindex import KnowledgeReindexer  # noqa: E402
from engram_enrichment.service.search import KnowledgeSearch  # noqa: E402
from engram_platform.mongo import connect_mongo  # noqa: E402
from engram_vectors import make_vector_store  # noqa: E402
from tests.unit.enrichment.recall import Harness  # noqa: E402
from tests.unit.enrichment.scenario import upserted  # noqa: E402
from tests.unit.enrichment.test_passages import passage  # noqa: E402

TENANT = "bench"
BATCH = 500


async def fill(h: Harness, entities: int, passages: int) -> None:
    """Records and passages through the handlers, their vectors computed by `h.embedder`."""
    texts = sentences(max(entities, passages))
    records = [
        upserted(
            f"rec_{n}", 1, {"hq": texts[n][:60], "fleet": n}, tenant=TENANT, entity_id=f"c:{n}"
        )
        for n in range(entities)
    ]
    for start in range(0, entities, BATCH):
        answers = await h.handlers.on_record_upserted_batch(records[start : start + BATCH])
        await h.embed([e for a in answers if not isinstance(a, Exception) for e in a])
    made = [passage(f"psg_{n}", texts[n], ["Bench"], tenant=TENANT) for n in range(passages)]
    for start in range(0, passages, BATCH):
        await h.passage(*made[start : start + BATCH])


async def run(entities: int, passages: int, source_kind: str, target_kind: str) -> dict[str, Any]:
    client = connect_mongo(os.environ["MONGODB_URI"], app_name="bench-knowledge-reindex")
    db = client[f"bench_kreindex_{uuid.uuid4().hex[:8]}"]
    with tempfile.TemporaryDirectory(prefix="engram-kreindex-") as vector_dir:
        store = make_vector_store("edge", root=vector_dir, keyword_indexes=KEYWORD_INDEXES)

        async def open_vectors(name: str, chosen: Embedder) -> KnowledgeVectors:
            vectors = KnowledgeVectors(store, name)
            await vectors.open(chosen.provenance.dimension, chosen.provenance.fingerprint)
            return vectors

        source = embedder(source_kind)
        h = Harness(await open_vectors("knowledge", source))
        h.embedder = source
        h.knowledge = KnowledgeBase(MongoEntityStore(db))
        h.passages = MongoPassageRows(db)  # type: ignore[assignment]
        h.handlers = EnrichmentHandlers(h.knowledge, Schema(), h.vectors, h.passages)
        began = time.perf_counter()
        await fill(h, entities, passages)
        filled = time.perf_counter() - began
        moving = MovingKnowledge(Embedded(source, h.vectors))
        reindexer = KnowledgeReindexer(
            ReindexDocument(db, REINDEX, STORE),
            KnowledgeWalkStore(db),
            moving,
            active=Space("knowledge", source_kind),
            embedder_for=lambda kind, _dim: embedder(kind),
            open_vectors=open_vectors,
            base_collection="knowledge",
        )
        search = KnowledgeSearch(
            source, moving, h.knowledge, passages=h.passages, space=moving.space
        )

        async def ask(query: str) -> int:
            return len((await search.search(TENANT, query, 5, min_score=-1.0)).results)

        switched = asyncio.Event()
        queries = [f"c:{n} hq" for n in range(50)]
        watcher = asyncio.create_task(asked_throughout(ask, switched, queries))
        began = time.perf_counter()
        job = await reindexer.start(target_kind)
        await reindexer.walk()
        took = time.perf_counter() - began
        switched.set()
        seen = await watcher
        after = await search.search(TENANT, "c:7 hq", 1, min_score=-1.0)
        kinds = await moving.active.vectors.counts()
        await store.close()
    await client.drop_database(db.name)
    client.close()
    return {
        "entities": entities,
        "passages": passages,
        "items": job.total,
        "items_by_kind": kinds,
        "source": source_kind,
        "target": target_kind,
        "source_fill_seconds": round(filled, 1),
        "reindex_seconds": round(took, 1),
        "items_per_second": round(job.total / took, 1),
        "searches_during": seen,
        "after_switch_top_hit_entity": after.results[0].get("entity_id"),
        "after_switch_model": after.results[0]["provenance"]["model_id"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entities", type=int, default=2000)
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--source", default="minilm")
    parser.add_argument("--target", default="bge-small")
    args = parser.parse_args()
    result = asyncio.run(run(args.entities, args.passages, args.source, args.target))
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "knowledge_reindex.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
