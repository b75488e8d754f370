"""A reindex's rate, and recall during it: the memory service's own reindexer, in process.

Run: python bench/memory_reindex.py [--memories 10000] [--source minilm] [--target bge-small]
Rows are inserted into a fresh database at MONGODB_URI and embedded into a source collection
(the embedded engine, a temporary directory); then the reindexer walks them into a collection
for the target embedder, verifies and switches, while a recall runs every 50 ms. The broker,
gateway and HTTP hop are not in it: it measures the walk (Mongo pages, the target embedder, the
upserts). Prints and writes bench-results/memory_reindex.json.
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
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embedders_vectors import sentences  # noqa: E402
from engram_embedders import Embedder, make_embedder  # noqa: E402
from engram_embedders.moving import ReindexDocument  # noqa: E402
from engram_embedders.reindex import Space  # noqa: E402
from engram_events.content import content_sha256  # noqa: E402
from engram_memory.adapters.reindex import REINDEX, STORE, ReindexStore  # noqa: E402
from engram_memory.adapters.rows import MEMORIES, memory_row  # noqa: E402
from engram_memory.adapters.vectors import KEYWORD_INDEXES, MemoryVectors  # noqa: E402
from engram_memory.service.moving import Embedded, MovingVectors, embed_into  # noqa: E402
from engram_memory.service.recall import Recall  # noqa: E402
from engram_memory.service.reindex import MemoryReindexer  # noqa: E402
from engram_platform.mongo import connect_mongo  # noqa: E402
from engram_vectors import make_vector_store  # noqa: E402
from tests.support.models import model_dir  # noqa: E402

RESULTS = ROOT / "bench-results"
TENANT, AGENT = "bench", "agent"


def embedder(kind: str) -> Embedder:
    options: dict[str, Any] = {"threads": 1, "model_dir": str(model_dir())}
    return make_embedder(kind, **options)  # type: ignore[arg-type]


def rows(count: int) -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    texts = sentences(count)
    return [
        {
            "_id": f"{TENANT}:m{n:06d}",
            "tenant_id": TENANT,
            "agent_id": AGENT,
            "memory_id": f"m{n:06d}",
            "type": "fact",
            "status": "active",
            "content": text,
            "content_sha256": content_sha256(text),
            "created_at": now,
            "stored_at": now,
        }
        for n, text in enumerate(texts)
    ]


async def asked_throughout(
    ask: Callable[[str], Awaitable[int]], done: asyncio.Event, queries: list[str]
) -> dict[str, int]:
    """A query every 50 ms until the switch (`ask` answers how many results): answers, empty
    answers and errors."""
    seen = {"answered": 0, "empty": 0, "errors": 0}
    n = 0
    while not done.is_set():
        try:
            found = await ask(queries[n % len(queries)])
            seen["answered"] += 1
            seen["empty"] += not found
        except Exception:
            seen["errors"] += 1
        n += 1
        await asyncio.sleep(0.05)
    return seen


async def run(count: int, source_kind: str, target_kind: str) -> dict[str, Any]:
    client = connect_mongo(os.environ["MONGODB_URI"], app_name="bench-reindex")
    db = client[f"bench_reindex_{uuid.uuid4().hex[:8]}"]
    with tempfile.TemporaryDirectory(prefix="engram-reindex-") as vector_dir:
        store = make_vector_store("edge", root=vector_dir, keyword_indexes=KEYWORD_INDEXES)

        async def open_vectors(name: str, chosen: Embedder) -> MemoryVectors:
            vectors = MemoryVectors(store, name)
            await vectors.open(chosen.provenance.dimension, chosen.provenance.fingerprint)
            return vectors

        source = Embedded(
            embedder(source_kind), await open_vectors("memories", embedder(source_kind))
        )
        made = rows(count)
        await db[MEMORIES].insert_many(made)
        began = time.perf_counter()
        for start in range(0, count, 256):
            page = made[start : start + 256]
            await embed_into(source, [(memory_row(row), (), "active") for row in page])
        filled = time.perf_counter() - began
        moving = MovingVectors(source)
        records = ReindexDocument(db, REINDEX, STORE)
        reindexer = MemoryReindexer(
            records,
            ReindexStore(db),
            moving,
            active=Space("memories", source_kind),
            embedder_for=lambda kind, _dim: embedder(kind),
            open_vectors=open_vectors,
            base_collection="memories",
        )
        recall = Recall(source.embedder, moving, space=moving.space)

        async def ask(query: str) -> int:
            return len((await recall.recall(TENANT, AGENT, query, 5, min_score=0.0)).results)

        switched = asyncio.Event()
        queries = [row["content"][:40] for row in made[:50]]
        watcher = asyncio.create_task(asked_throughout(ask, switched, queries))
        began = time.perf_counter()
        await reindexer.start(target_kind)
        await reindexer.walk()
        took = time.perf_counter() - began
        switched.set()
        seen = await watcher
        after = await recall.recall(TENANT, AGENT, made[7]["content"], 5, min_score=0.0)
        await store.close()
    await client.drop_database(db.name)
    client.close()
    return {
        "memories": count,
        "source": source_kind,
        "target": target_kind,
        "source_fill_seconds": round(filled, 1),
        "reindex_seconds": round(took, 1),
        "memories_per_second": round(count / took, 1),
        "recalls_during": seen,
        "after_switch_top_hit_is_the_memory": after.results[0]["memory_id"] == made[7]["memory_id"],
        "after_switch_model": after.results[0]["provenance"]["model_id"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--source", default="minilm")
    parser.add_argument("--target", default="bge-small")
    args = parser.parse_args()
    result = asyncio.run(run(args.memories, args.source, args.target))
    print(json.dumps(result, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "memory_reindex.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
