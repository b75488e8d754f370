"""Where a passage search's time goes inside enrichment, at N passages of one tenant.

Run: python bench/knowledge_profile.py [--passages 100000] [--queries 200]
Needs MONGODB_URI (the passage rows live there, in a database of their own, dropped after).

Builds enrichment's KnowledgeSearch in-process over the embedded engine (a temporary directory,
the service's keyword indexes) and MongoPassageRows, with the hashing embedder, and fills it with
the prose of bench/passages.py, one passage a paragraph. Then times `--queries` searches
(`kinds: ["passage"]`, top_k 10, after 20 warm-up ones), the whole search and its stages: query
embedding, the engine's hybrid query, ranking and flooring, the passage rows read; and the
engine's hybrid query alone with the filter before `scope` (tenant AND kind) and with `scope`.
With `--unscoped` the points are written without `scope`, as before it existed, and the
backfill that opening the collection runs is timed on them. Prints one JSON object (ms) and
writes bench-results/knowledge_profile.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.memory_recall import percentiles  # noqa: E402
from bench.passages import OBJECTS, SEED, VERBS, WARM_UP, WHEN, page_of  # noqa: E402
from engram_embedders.hashing import HashingEmbedder  # noqa: E402
from engram_enrichment.adapters.passages import MongoPassageRows  # noqa: E402
from engram_enrichment.adapters.vectors import (  # noqa: E402
    KEYWORD_INDEXES,
    SCOPE,
    KnowledgeVectors,
)
from engram_enrichment.domain.passage_rows import PassageRow  # noqa: E402
from engram_enrichment.domain.passages import embedded_sha256, passage_text  # noqa: E402
from engram_enrichment.domain.sections import text_sha256  # noqa: E402
from engram_enrichment.service.knowledge import KnowledgeBase  # noqa: E402
from engram_enrichment.service.search import (  # noqa: E402
    KnowledgeSearch,
    PassageWindows,
    candidate_pool,
)
from engram_events.payloads.passages import PassageUpserted  # noqa: E402
from engram_vectors import Point, QdrantEdgeStore  # noqa: E402
from engram_vectors.lexical import query_vector  # noqa: E402
from engram_vectors.ranking import FusionSettings, floor_ranked, rank  # noqa: E402
from tests.unit.enrichment.fakes import MemoryStore  # noqa: E402

TENANT = "tnt_profile"
PUT_BATCH = 512


class UnscopedVectors(KnowledgeVectors):
    """Writes points as enrichment did before `scope`, for timing the backfill."""

    def _point(
        self,
        tenant_id: str,
        item_id: str,
        vector: Sequence[float],
        payload: dict[str, Any],
        text: str,
    ) -> Point:
        point = super()._point(tenant_id, item_id, vector, payload, text)
        return replace(point, payload={k: v for k, v in point.payload.items() if k != SCOPE})


def paragraphs(count: int) -> list[tuple[str, str]]:
    """`count` (heading, paragraph) pairs of the passages bench's prose."""
    rng = random.Random(SEED)
    found: list[tuple[str, str]] = []
    page = 0
    while len(found) < count:
        lines = page_of(rng, page // 30, page % 30).split("\n")
        heading = lines[0].lstrip("# ")
        found += [(heading, line) for line in lines[1:] if line]
        page += 1
    return found[:count]


async def fill(
    vectors: KnowledgeVectors, rows: MongoPassageRows, embedder: HashingEmbedder, count: int
) -> float:
    """Rows and points for `count` passages, as enrichment writes them; passages/s."""
    started = time.perf_counter()
    fingerprint = embedder.provenance.fingerprint
    items = paragraphs(count)
    for start in range(0, count, PUT_BATCH):
        chunk = items[start : start + PUT_BATCH]
        batch = []
        for n, (heading, text) in enumerate(chunk, start):
            embedded = passage_text([heading], text)
            passage = PassageUpserted(
                passage_id=f"psg_{n}",
                document_id=f"doc_{n // 300}",
                version="v1",
                name=f"manual-{n // 300}.md",
                ordinal=n % 300,
                heading_path=[heading],
                page=1 + n % 300 // 10,
                page_end=1 + n % 300 // 10,
                start=0,
                end=len(text),
                text=text,
                text_sha256=text_sha256(text),
            )
            batch.append((PassageRow(TENANT, passage, embedded_sha256(embedded)), embedded))
        computed = await embedder.embed([text for _, text in batch])
        await rows.put([row for row, _ in batch])
        await vectors.put_passages(
            TENANT,
            [(row, text, v) for (row, text), v in zip(batch, computed.vectors, strict=True)],
            fingerprint,
        )
    return count / (time.perf_counter() - started)


async def timed(samples: dict[str, list[float]], name: str, call: Awaitable[Any]) -> Any:
    """Await `call`, adding its duration to `samples[name]`."""
    started = time.perf_counter()
    result = await call
    samples.setdefault(name, []).append(time.perf_counter() - started)
    return result


async def stages(
    search: KnowledgeSearch, vectors: KnowledgeVectors, query: str, samples: dict[str, list[float]]
) -> None:
    """KnowledgeSearch.search's steps one by one, each timed."""
    embedder = search.embedder
    fingerprint = embedder.provenance.fingerprint
    await timed(samples, "fingerprint", vectors.fingerprint())
    embedded = await timed(samples, "embed", embedder.embed([query]))
    sparse = query_vector(query)
    hits = await timed(
        samples,
        "engine_hybrid",
        vectors.candidates(
            TENANT,
            embedded.vectors[0],
            sparse if sparse.indices else None,
            candidate_pool(10),
            fingerprint=fingerprint,
            kinds=["passage"],
        ),
    )
    started = time.perf_counter()
    ranked = rank(hits, query, "hybrid", FusionSettings(), now=datetime.now(UTC))
    passing = floor_ranked(ranked, search.floor(None), len(ranked)).kept
    samples.setdefault("rank_floor", []).append(time.perf_counter() - started)
    windows = PassageWindows(search.passages, TENANT, [item.hit for item in passing], 10)
    if passing:
        await timed(samples, "rows_read", windows.row(0))


async def engine_filters(
    vectors: KnowledgeVectors, query: str, samples: dict[str, list[float]], embedder: Any
) -> None:
    """The engine's hybrid query alone, filtered as before `scope` and as now."""
    vector = (await embedder.embed([query])).vectors[0]
    sparse = query_vector(query)
    fingerprint = embedder.provenance.fingerprint
    for name, where in (
        ("engine_tenant_and_kind", {"tenant_id": TENANT, "kind": ["passage"]}),
        ("engine_scope", {"scope": [f"{TENANT}:passage"]}),
    ):
        await timed(
            samples,
            name,
            vectors.store.hybrid_search(
                vectors.collection,
                vector=vector,
                sparse=sparse,
                limit=candidate_pool(10),
                filter=where,
                fingerprint=fingerprint,
                idf_filter={"tenant_id": TENANT},
            ),
        )


async def profile(passages: int, queries: int, uri: str, unscoped: bool) -> dict[str, Any]:
    """Fill, backfill (a no-op unless `unscoped`) twice, then time the searches and stages."""
    embedder = HashingEmbedder()
    client: AsyncIOMotorClient[Any] = AsyncIOMotorClient(uri)
    database = f"engram_profile_{uuid.uuid4().hex[:8]}"
    rows = MongoPassageRows(client[database])
    with tempfile.TemporaryDirectory(prefix="engram-profile-") as directory:
        store = QdrantEdgeStore(Path(directory), keyword_indexes=KEYWORD_INDEXES)
        writer = (UnscopedVectors if unscoped else KnowledgeVectors)(store, "knowledge")
        vectors = KnowledgeVectors(store, "knowledge")
        timings: dict[str, Any] = {}
        try:
            await vectors.open(embedder.provenance.dimension, embedder.provenance.fingerprint)
            rate = await fill(writer, rows, embedder, passages)
            for name in ("backfill", "backfill_again"):
                started = time.perf_counter()
                scoped = await vectors.backfill_scope()
                timings[name] = {
                    "points": scoped,
                    "ms": round(1000 * (time.perf_counter() - started), 1),
                }
            search = KnowledgeSearch(embedder, vectors, KnowledgeBase(MemoryStore()), passages=rows)
            rng = random.Random(SEED)
            asked = [
                f"who {rng.choice(VERBS).rstrip('s')}s {rng.choice(OBJECTS)} {rng.choice(WHEN)}?"
                for _ in range(WARM_UP + queries)
            ]
            samples: dict[str, list[float]] = {}
            steps: list[Callable[[str, dict[str, list[float]]], Awaitable[Any]]] = [
                lambda q, s: timed(s, "search", search.search(TENANT, q, 10, kinds=["passage"])),
                lambda q, s: stages(search, vectors, q, s),
                lambda q, s: engine_filters(vectors, q, s, embedder),
            ]
            for n, query in enumerate(asked):
                kept: dict[str, list[float]] = samples if n >= WARM_UP else {}
                for step in steps:
                    await step(query, kept)
            return {
                "passages": passages,
                "fill_passages_per_s": round(rate, 1),
                "queries": queries,
                **timings,
                **{name: percentiles(taken) for name, taken in samples.items()},
            }
        finally:
            await store.close()
            await client.drop_database(database)
            client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--unscoped", action="store_true", help="fill without scope, backfill")
    args = parser.parse_args()
    uri = os.environ["MONGODB_URI"]
    found = asyncio.run(profile(args.passages, args.queries, uri, args.unscoped))
    print(json.dumps(found), flush=True)
    target = ROOT / "bench-results" / "knowledge_profile.json"
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(found, indent=2))
    print(f"wrote {target}", flush=True)


if __name__ == "__main__":
    main()
