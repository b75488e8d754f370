"""Document passages through the whole platform: indexing throughput against the embedder alone,
upload-to-searchable time for one document, and knowledge-search latency at N passages.

Run: python bench/passages.py [--pages 300] [--passages 2000] [--embedder minilm|hashing]
     [--scale-embedder hashing] [--queries 200]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).

1. A generated corpus of prose Markdown the size of a `--pages`-page PDF (about 3,000 characters
   a page, a heading per section, documents of 30 pages) is uploaded through the gateway at
   once; passages/s is the number of passages over the time from the first upload until every
   passage has its vector (counted through enrichment's prune-verification endpoint, which
   counts a document's passage points: the moment search can return them). The same passage
   texts (heading path and text, as enrichment sends them) are then embedded by the same
   embedder alone in this process, 64 per call on one thread as the embedding service runs it;
   the ratio is platform / alone (target >= 0.8).
2. One more 1-page document is uploaded at a time, on the idle platform, five times: the time
   from its POST until all its passages have vectors.
3. More generated documents are uploaded until the tenant holds `--passages` passages (with
   `--scale-embedder`, on a second platform with that embedder: 100k passages with MiniLM take
   hours on two cores), then `--queries` knowledge searches (`kinds: ["passage"]`, top_k 10)
   are sent through the gateway one at a time after a warm-up: p50/p95 (target p95 <= 25 ms).

Writes bench-results/passages.json.
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
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.memory_recall import percentiles  # noqa: E402
from engram_embedders import make_embedder  # noqa: E402
from engram_enrichment.domain.passages import passage_text  # noqa: E402
from tests.conftest import Infra  # noqa: E402
from tests.support.internal import internal_headers  # noqa: E402
from tests.support.platform import Platform, start_platform, stop_platform  # noqa: E402
from tests.support.tenants import tenant_of  # noqa: E402

RESULTS = ROOT / "bench-results"
SEED = 39
PAGE_CHARS = 3000
PAGES_PER_DOCUMENT = 30
BATCH = 64
WARM_UP = 20
QUIET = {"ENGRAM_LOG_LEVEL": "WARNING", "ENGRAM_TRACING": "false"}
SUBJECTS = (
    "The pump controller",
    "Each regional depot",
    "The maintenance crew",
    "A certified inspector",
    "The billing system",
    "Every field engineer",
    "The cooling circuit",
    "The quality board",
    "A night-shift operator",
    "The warehouse robot",
)
VERBS = (
    "records",
    "checks",
    "reports",
    "adjusts",
    "replaces",
    "reviews",
    "calibrates",
    "archives",
    "escalates",
    "schedules",
)
OBJECTS = (
    "the pressure readings",
    "worn gaskets and seals",
    "overdue invoices",
    "the spare-part inventory",
    "every safety incident",
    "the firmware version",
    "coolant temperature drift",
    "the delivery backlog",
    "open work orders",
    "filter replacement dates",
)
WHEN = (
    "before each shift",
    "at the end of every month",
    "whenever an alarm is raised",
    "within two working days",
    "after every firmware update",
    "during the quarterly audit",
    "once the line has stopped",
    "when the supplier confirms",
)
TOPICS = (
    "Inspection",
    "Maintenance",
    "Billing",
    "Safety",
    "Logistics",
    "Calibration",
    "Reporting",
    "Escalation",
)


def page_of(rng: random.Random, doc: int, page: int) -> str:
    """One page: a section heading and paragraphs of distinct sentences."""
    lines = [f"## {rng.choice(TOPICS)} procedure {doc}.{page}", ""]
    size = 0
    while size < PAGE_CHARS:
        paragraph = " ".join(
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
            f"{rng.choice(WHEN)} (rule {doc}-{page}-{rng.randint(1, 999_999)})."
            for _ in range(rng.randint(3, 6))
        )
        lines += [paragraph, ""]
        size += len(paragraph)
    return "\n".join(lines)


def documents(pages: int, first: int, seed: int = SEED) -> list[tuple[str, bytes]]:
    """`pages` pages of prose as Markdown documents of 30 pages, named from `first` on."""
    rng = random.Random(f"{seed}-{first}")
    out = []
    for n in range(0, pages, PAGES_PER_DOCUMENT):
        doc = first + n // PAGES_PER_DOCUMENT
        count = min(PAGES_PER_DOCUMENT, pages - n)
        body = f"# Operations manual {doc}\n\n" + "\n".join(
            page_of(rng, doc, p) for p in range(count)
        )
        out.append((f"manual-{doc}.md", body.encode()))
    return out


def upload(api: httpx.Client, name: str, content: bytes) -> str:
    """POST a document as `curl -F file=@name` does; its id."""
    sent = api.post("/v1/documents", files={"file": (name, content, "application/octet-stream")})
    assert sent.status_code == 202, sent.text
    return str(sent.json()["document_id"])


def listed(api: httpx.Client, document_id: str) -> list[dict[str, Any]] | None:
    """Every passage of the document's current version, or None while it has none."""
    passages: list[dict[str, Any]] = []
    after = -1
    while True:
        page = api.get(
            f"/v1/documents/{document_id}/passages", params={"after": after, "limit": 500}
        )
        if page.status_code == 404:
            return None
        assert page.status_code == 200, page.text
        body = page.json()
        passages += body["passages"]
        if body["next_after"] is None:
            return passages
        after = body["next_after"]


class Indexed:
    """How many passage points documents have in enrichment, asked as prune verification does."""

    def __init__(self, platform: Platform) -> None:
        self.url = platform.services["enrichment"].url
        self.headers = internal_headers(tenant_of(platform.env, platform.key))
        self.client = httpx.Client(base_url=self.url, headers=self.headers, timeout=60)

    def count(self, document_ids: list[str]) -> int:
        total = 0
        for start in range(0, len(document_ids), 1000):
            body = {"documents": document_ids[start : start + 1000]}
            answer = self.client.post("/internal/v1/prune/verify", json=body)
            assert answer.status_code == 200, answer.text
            total += int(answer.json()["references"]["passage_vectors"])
        return total

    def close(self) -> None:
        self.client.close()


def index(
    api: httpx.Client,
    indexed: Indexed,
    docs: list[tuple[str, bytes]],
    timeout: float,
    every: float = 0.5,
) -> tuple[list[str], list[dict[str, Any]], float]:
    """Upload every document at once; their ids, passages and the seconds until every passage
    has its vector."""
    started = time.perf_counter()
    ids = [upload(api, name, content) for name, content in docs]
    passages: dict[str, list[dict[str, Any]]] = {}
    deadline = time.monotonic() + timeout
    while True:
        for document_id in ids:
            if document_id not in passages:
                found = listed(api, document_id)
                if found is not None:
                    passages[document_id] = found
        if len(passages) == len(ids):
            want = sum(len(p) for p in passages.values())
            if indexed.count(ids) >= want:
                took = time.perf_counter() - started
                return ids, [p for d in ids for p in passages[d]], took
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(docs)} documents not indexed within {timeout:.0f}s")
        time.sleep(every)


async def embedder_alone(kind: str, texts: list[str], passes: int = 3) -> float:
    """The embedder alone on these texts, 64 per call on one thread as the embedding service
    runs it: texts/s, the median of `passes`."""
    options: dict[str, Any] = {"threads": 1, "batch_size": BATCH} if kind == "minilm" else {}
    embedder = make_embedder("minilm" if kind == "minilm" else "hashing", **options)
    await embedder.embed(texts[:8])
    rates = []
    for _ in range(passes):
        started = time.perf_counter()
        for start in range(0, len(texts), BATCH):
            await embedder.embed(texts[start : start + BATCH])
        rates.append(len(texts) / (time.perf_counter() - started))
    await embedder.aclose()
    return round(sorted(rates)[len(rates) // 2], 1)


def one_document(api: httpx.Client, indexed: Indexed, tries: int) -> dict[str, Any]:
    """Upload-to-searchable of a 1-page document on the idle platform, `tries` times."""
    seconds = []
    for n in range(tries):
        _, passages, took = index(api, indexed, documents(1, 90_000 + n), 120, every=0.05)
        seconds.append(took)
    ordered = sorted(seconds)
    return {
        "runs": len(seconds),
        "passages_each": len(passages),
        "median_s": round(ordered[len(ordered) // 2], 3),
        "max_s": round(ordered[-1], 3),
    }


def search_latency(api: httpx.Client, queries: int) -> dict[str, Any]:
    """Knowledge searches for passages through the gateway, one at a time."""
    rng = random.Random(SEED)
    asked = [
        f"who {rng.choice(VERBS).rstrip('s')}s {rng.choice(OBJECTS)} {rng.choice(WHEN)}?"
        for _ in range(WARM_UP + queries)
    ]
    samples = []
    for n, query in enumerate(asked):
        body = {"query": query, "top_k": 10, "kinds": ["passage"]}
        started = time.perf_counter()
        found = api.post("/v1/knowledge/search", json=body)
        took = time.perf_counter() - started
        assert found.status_code == 200, found.text
        if n >= WARM_UP:
            samples.append(took)
    return percentiles(samples)


def platform_env(embedder: str) -> dict[str, str]:
    """Every embedder setting of the platform's services, and quiet logs."""
    return {
        **QUIET,
        "ENGRAM_EMBEDDING_EMBEDDER": embedder,
        "ENGRAM_MEMORY_EMBEDDER": embedder,
        "ENGRAM_ENRICHMENT_EMBEDDER": embedder,
    }


def fill(
    api: httpx.Client, indexed: Indexed, have: int, target: int, first: int, per_page: float
) -> tuple[int, float | None]:
    """Upload more generated documents, at most 3,000 pages a round, until the tenant holds
    `target` passages; how many it holds and the passages/s of the filling."""
    total, took_all, added = have, 0.0, 0
    while total < target:
        pages = max(1, min(3000, int((target - total) / per_page) + 1))
        ids, passages, took = index(api, indexed, documents(pages, first), 7200)
        first += len(ids)
        total += len(passages)
        added += len(passages)
        took_all += took
        print(f"  {total} passages indexed", flush=True)
    return total, round(added / took_all, 1) if took_all else None


def run(args: argparse.Namespace, infra: Infra, root: Path) -> dict[str, Any]:
    """The three measurements; the scale part on a second platform when its embedder differs."""
    result: dict[str, Any] = {"embedder": args.embedder, "pages": args.pages}
    platform = start_platform(infra, root / "a", **platform_env(args.embedder))
    indexed = Indexed(platform)
    try:
        with platform.client(timeout=120) as api:
            docs = documents(args.pages, 0)
            ids, passages, took = index(api, indexed, docs, args.timeout)
            texts = [passage_text(p["heading_path"] or [], p["text"]) for p in passages]
            rate = len(passages) / took
            alone = asyncio.run(embedder_alone(args.embedder, texts))
            result["throughput"] = {
                "documents": len(ids),
                "characters": sum(len(content) for _, content in docs),
                "passages": len(passages),
                "seconds": round(took, 2),
                "platform_passages_per_s": round(rate, 1),
                "embedder_alone_per_s": alone,
                "ratio": round(rate / alone, 3),
                "target_ratio": 0.8,
            }
            print(json.dumps(result["throughput"]), flush=True)
            result["upload_to_searchable"] = one_document(api, indexed, 5)
            print(json.dumps(result["upload_to_searchable"]), flush=True)
            have = len(passages) + 5 * result["upload_to_searchable"]["passages_each"]
            per_page = len(passages) / args.pages
            if args.scale_embedder == args.embedder:
                result["search"] = scale(api, indexed, have, args, per_page)
        if args.scale_embedder != args.embedder:
            indexed.close()
            stop_platform(platform)
            platform = start_platform(infra, root / "b", **platform_env(args.scale_embedder))
            indexed = Indexed(platform)
            with platform.client(timeout=120) as api:
                result["search"] = scale(api, indexed, 0, args, per_page)
    finally:
        indexed.close()
        stop_platform(platform)
    print(json.dumps(result["search"]), flush=True)
    return result


def scale(
    api: httpx.Client, indexed: Indexed, have: int, args: argparse.Namespace, per_page: float
) -> dict[str, Any]:
    """Search latency once the tenant holds `--passages` passages."""
    total, fill_rate = fill(api, indexed, have, args.passages, 1000, per_page)
    return {
        "embedder": args.scale_embedder,
        "passages": total,
        "fill_passages_per_s": fill_rate,
        **search_latency(api, args.queries),
        "target_p95_ms": 25,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=300, help="pages of the throughput corpus")
    parser.add_argument("--passages", type=int, default=2000, help="passages for search latency")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument(
        "--scale-embedder",
        choices=("minilm", "hashing"),
        default=None,
        help="the embedder of the search-latency platform (default: --embedder)",
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args()
    args.scale_embedder = args.scale_embedder or args.embedder
    infra = Infra(os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["MONGODB_URI"])
    with tempfile.TemporaryDirectory(prefix="engram-passages-bench-") as root:
        result = run(args, infra, Path(root))
    result["conditions"] = {"cpus": os.cpu_count(), "command": " ".join(sys.argv[1:])}
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "passages.json"
    target.write_text(json.dumps(result, indent=2))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
