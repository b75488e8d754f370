"""Export and import: memories and records per second out of one tenant (`GET /v1/export`) and
into a fresh one (`POST /v1/import`), then a second import of the same file (everything already
there).

Run: python bench/export_import.py [--memories 5000] [--records 2000]
Needs KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI (`python -m bench` provides them).

Memories: embedding, memory and a gateway on fresh topics and databases (the hashing embedder,
so the model's cost does not hide the transfer's); one agent is loaded through `memories:batch`
until every memory is stored, and exported without knowledge (`knowledge=false`). Export is
timed from the request to the checksum line; import twice: until the answer (every memory
checked and queued) and until the last imported memory is stored (`memory.stored` seen on the
broker). Records: the whole platform (hashing embedder), a structured import of `--records`
rows, exported (its documents and records) and imported: until the answer (every record
queued), until the target lists every record, and until enrichment has every entity.
`--records 0` skips it. Writes bench-results/export_import.json.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.memory_recall import (  # noqa: E402
    sentences,
    sustained_writes,
    wait_stored,
    write_platform,
)
from engram_client import AsyncEngramClient  # noqa: E402
from tests.conftest import Infra  # noqa: E402
from tests.support.platform import start_platform, stop_platform  # noqa: E402
from tests.support.polling import until  # noqa: E402
from tests.support.tenants import create_tenant  # noqa: E402

RESULTS = ROOT / "bench-results"
HASHING = {"ENGRAM_EMBEDDING_EMBEDDER": "hashing", "ENGRAM_MEMORY_EMBEDDER": "hashing"}
EVERYWHERE = {**HASHING, "ENGRAM_ENRICHMENT_EMBEDDER": "hashing"}
STORE_SECONDS = 900.0


def rate(count: int, seconds: float) -> float:
    return round(count / max(seconds, 1e-9), 1)


async def run(memories: int) -> dict[str, Any]:
    """Load, export, import twice; the rates of each."""
    seen: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="engram-bench-transfer-") as tmp:
        async with write_platform(Path(tmp), "transfer", seen, HASHING) as (gateway, key, agent):
            texts = sentences(memories, seed=43)
            await sustained_writes(gateway, key, agent, texts, seen, 100, 1000, [])
            async with AsyncEngramClient(gateway.url, key, timeout=300) as source:
                out = io.BytesIO()
                started = time.perf_counter()
                tally = await source.export_tenant(out, knowledge=False)
                export_s = time.perf_counter() - started
            assert tally.checksum is not None, "the export was cut"
            exported = tally.kinds.get("memory", 0)
            path = Path(tmp) / "tenant.ndjson"
            path.write_bytes(out.getvalue())
            target_key = create_tenant(gateway.env, "imported")
            async with AsyncEngramClient(gateway.url, target_key, timeout=300) as target:
                import_started = time.perf_counter()
                answer = await target.import_tenant(path)
                queued_s = time.perf_counter() - import_started
                new_ids = {m: 0.0 for m in answer["memories"]["ids"].values()}
                await wait_stored(new_ids, seen, STORE_SECONDS)
                stored = [seen[m] for m in new_ids if m in seen]
                stored_s = max(stored, default=import_started) - import_started
                started = time.perf_counter()
                repeat = await target.import_tenant(path)
                repeat_s = time.perf_counter() - started
    return {
        "memories_exported": exported,
        "export_bytes": tally.size,
        "export_seconds": round(export_s, 2),
        "export_per_s": rate(exported, export_s),
        "import_written": answer["memories"]["written"],
        "import_queued_seconds": round(queued_s, 2),
        "import_queued_per_s": rate(answer["memories"]["written"], queued_s),
        "import_stored": len(stored),
        "import_stored_per_s": rate(len(stored), stored_s),
        "reimport_present": repeat["memories"]["present"],
        "reimport_written": repeat["memories"]["written"],
        "reimport_seconds": round(repeat_s, 2),
        "reimport_per_s": rate(repeat["memories"]["present"], repeat_s),
    }


def _listed(client: httpx.Client, path: str, key: str, params: dict[str, Any]) -> int:
    """How many items a paged listing holds (records by cursor, entities by `after`)."""
    total, after = 0, None
    while True:
        page = client.get(path, params={**params, **({key: after} if after else {})}).json()
        items = page.get("records", page.get("entities", []))
        total += len(items)
        after = page.get("next_cursor" if key == "cursor" else "next_after")
        if not after or not items:
            return total


def records(count: int) -> dict[str, Any]:
    """Import `count` rows, export the tenant, import it into a fresh one: the rates."""
    infra = Infra(os.environ["KAFKA_BOOTSTRAP_SERVERS"], os.environ["MONGODB_URI"])
    with tempfile.TemporaryDirectory(prefix="engram-bench-records-") as root:
        platform = start_platform(infra, Path(root), **EVERYWHERE)
        try:
            return _records(platform.client(timeout=600), platform, count)
        finally:
            stop_platform(platform)


def _completed(client: httpx.Client, status_url: str) -> None:
    until(lambda: client.get(status_url).json().get("status") == "completed", "import", 600)


def _records(source: httpx.Client, platform: Any, count: int) -> dict[str, Any]:
    rows = [{"id": f"c{n}", "name": f"Carrier {n}", "city": f"City {n % 97}"} for n in range(count)]
    for start in range(0, count, 5000):
        body = {"source": "bench", "record_type": "carrier", "rows": rows[start : start + 5000]}
        url: str = source.post("/v1/records:import", json=body).json()["status_url"]
        _completed(source, url)
    entities = ("/v1/knowledge/entities", "after", {"limit": 1000})
    until(lambda: _listed(source, *entities) == count, "source entities", 900, 1.0)
    started = time.perf_counter()
    exported = source.get("/v1/export")
    export_s = time.perf_counter() - started
    assert exported.status_code == 200, exported.text
    target = platform.client(create_tenant(platform.env, "records-target"), timeout=600)
    headers = {"content-type": "application/x-ndjson"}
    started = time.perf_counter()
    answer = target.post("/v1/import", content=exported.content, headers=headers).json()
    queued_s = time.perf_counter() - started
    listing = ("/v1/records", "cursor", {"limit": 500})
    until(lambda: _listed(target, *listing) == count, "records restored", 900, 1.0)
    stored_s = time.perf_counter() - started
    until(lambda: _listed(target, *entities) == count, "entities rebuilt", 900, 1.0)
    folded_s = time.perf_counter() - started
    started = time.perf_counter()
    again = target.post("/v1/import", content=exported.content, headers=headers).json()
    repeat_s = time.perf_counter() - started
    return {
        "records_exported": count,
        "records_export_seconds": round(export_s, 2),
        "records_export_per_s": rate(count, export_s),
        "records_import_queued_seconds": round(queued_s, 2),
        "records_import_queued_per_s": rate(answer["records"]["queued"], queued_s),
        "records_import_listed_per_s": rate(count, stored_s),
        "records_import_entities_per_s": rate(count, folded_s),
        "records_reimport_seconds": round(repeat_s, 2),
        "records_reimport_queued": again["records"]["queued"],
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000, help="memories in the tenant")
    parser.add_argument("--records", type=int, default=2000, help="records in the tenant")
    args = parser.parse_args()
    if args.memories < 2100:
        parser.error("--memories must exceed 2,100 (the load's window is 1,000 memories)")
    RESULTS.mkdir(exist_ok=True)
    result = await run(args.memories)
    if args.records:
        result.update(await asyncio.to_thread(records, args.records))
    report = {
        "day": datetime.now(UTC).date().isoformat(),
        "memories": args.memories,
        "records": args.records,
        "embedder": "hashing",
        **result,
    }
    (RESULTS / "export_import.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
