"""Issue 43's export and import: a tenant of 10k memories, 2k records, a curator's edit and a
memory edit, exported and imported into a fresh tenant, lists, counts, knows and recalls the same
(ids mapped); importing the same file again adds nothing."""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import Infra
from tests.support.platform import Platform, start_platform, stop_platform
from tests.support.polling import until
from tests.support.tenants import create_tenant

MEMORIES = 10_000
AGENTS = 2
CSV_ROWS = 1500
IMPORT_ROWS = 500
CONTESTED = 50
"""Carriers the CSV and the structured import place in different cities: contradictions."""
QUERIES = 36
HASHING = {
    "ENGRAM_EMBEDDING_EMBEDDER": "hashing",
    "ENGRAM_MEMORY_EMBEDDER": "hashing",
    "ENGRAM_ENRICHMENT_EMBEDDER": "hashing",
}
WORDS = (
    "invoice carrier contract renewal pallet customs warehouse refund audit tariff shipment "
    "courier ledger supplier quota forklift manifest harbour depot freight container barge "
    "crane dock trailer axle tyre diesel route toll border permit broker insurance claim "
    "damage delay storm strike pilot berth vessel cargo reefer chassis seal scanner label "
    "barcode ferry rail wagon siding hub parcel locker drone van"
).split()
IDS = re.compile(r"\b(rec_|doc_|ctr_)[0-9a-z]+")
"""Record, document and contradiction ids an article cites: the target's are other ids."""
SHOWN = ("content", "type", "metadata", "user_id", "session_id", "status", "created_at")


@pytest.fixture(scope="module")
def platform(infra: Infra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """The whole platform with the hashing embedder everywhere (fast, deterministic)."""
    running = start_platform(infra, tmp_path_factory.mktemp("transfer"), **HASHING)
    try:
        yield running
    finally:
        stop_platform(running)


def _content(rng: random.Random, n: int) -> str:
    return f"fact {n}: " + " ".join(rng.sample(WORDS, rng.randint(6, 12)))


def _fill(client: httpx.Client, agents: list[str]) -> None:
    """10k memories through `:batch`, four requests at a time."""
    rng = random.Random(43)
    batches = []
    for start in range(0, MEMORIES, 100):
        memories = [
            {
                "content": _content(rng, n),
                "type": "note" if n % 3 else "fact",
                "metadata": {"n": n},
                "user_id": f"user-{n % 4}",
                "idempotency_key": f"fill-{n}",
            }
            for n in range(start, start + 100)
        ]
        batches.append((agents[(start // 100) % len(agents)], memories))

    def send(batch: tuple[str, list[dict[str, Any]]]) -> None:
        agent, memories = batch
        answer = client.post(f"/v1/agents/{agent}/memories:batch", json={"memories": memories})
        assert answer.status_code == 202, answer.text

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(send, batches))


def _knowledge(client: httpx.Client) -> None:
    """A CSV document of 1.5k carriers, a structured import of 500 (50 contradicting the CSV)."""
    rows = "\n".join(f"c{i},Carrier {i},City {i % 40}" for i in range(CSV_ROWS))
    upload = {"name": "carriers.csv", "mime": "text/csv", "text": "id,name,city\n" + rows}
    answer = client.post("/v1/documents", json=upload)
    assert answer.status_code == 202, answer.text
    doc_id = answer.json()["document_id"]
    imported = [{"id": f"c{i}", "city": f"Port {i}"} for i in range(CONTESTED)]
    imported += [
        {"id": f"x{i}", "name": f"Extra {i}", "city": f"City {i % 7}"}
        for i in range(IMPORT_ROWS - CONTESTED)
    ]
    body = {"source": "fleet-sync", "record_type": "carrier", "rows": imported}
    answer = client.post("/v1/records:import", json=body)
    assert answer.status_code == 202, answer.text
    status_url = answer.json()["status_url"]
    until(lambda: client.get(status_url).json().get("status") == "completed", "import done", 120)
    until(
        lambda: client.get(f"/v1/documents/{doc_id}").json().get("status") == "extracted",
        "document extracted",
        120,
    )
    edit = {"value": "Gdansk", "reason": "confirmed by phone"}
    answer = client.put("/v1/knowledge/entities/carrier:c1/facts/city", json=edit)
    assert answer.status_code == 202, answer.text


def _count(client: httpx.Client, agent: str) -> dict[str, Any]:
    counted: dict[str, Any] = client.get(f"/v1/agents/{agent}/memories:count").json()
    return counted


def _settled(client: httpx.Client, agents: list[str], wanted: int) -> None:
    """Every memory stored (none pending) and `wanted` active across the agents."""

    def look() -> bool:
        counts = [_count(client, a)["by_status"] for a in agents]
        return (
            sum(c.get("active", 0) for c in counts) == wanted
            and sum(c.get("pending", 0) for c in counts) == 0
        )

    until(look, f"{wanted} active memories", 180, 0.5)


def _listing(client: httpx.Client, agent: str) -> list[dict[str, Any]]:
    """Every memory of the agent, oldest first, every page (a `:batch` shares one time, so
    its memories follow in id order, which the target's ids change)."""
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000, "order": "oldest"}
        if cursor:
            params["cursor"] = cursor
        page = client.get(f"/v1/agents/{agent}/memories", params=params)
        assert page.status_code == 200, page.text
        found += page.json()["memories"]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return found


def _entities(client: httpx.Client) -> list[str]:
    ids: list[str] = []
    after: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000, **({"after": after} if after else {})}
        page = client.get("/v1/knowledge/entities", params=params).json()
        ids += [e["entity_id"] for e in page["entities"]]
        after = page.get("next_after")
        if not after or not page["entities"]:
            return ids


def _kind(support: dict[str, Any]) -> str:
    if support.get("edit"):
        return "human"
    return "document" if support.get("document_id") else "import"


def _entity(client: httpx.Client, entity: str) -> dict[str, Any]:
    """What must match: each fact's value, status and its support's count and kinds, and the
    article (with the ids it cites masked)."""
    found = client.get(f"/v1/knowledge/entities/{entity}")
    assert found.status_code == 200, found.text
    body = found.json()
    facts = sorted(
        (
            f["attribute"],
            str(f["value"]),
            f["status"],
            len(f["support"]),
            tuple(sorted(_kind(s) for s in f["support"])),
        )
        for f in body["facts"]
    )
    return {"facts": facts, "article": _masked(body.get("article") or "")}


def _masked(article: str) -> list[str]:
    """The article with the ids it cites masked, and each line's sources in a stable order
    (they are listed by record id, and the target's record ids are other ids)."""
    lines = []
    for line in IDS.sub(lambda m: m.group(1) + "*", article).splitlines():
        head, said, sources = line.partition(" — sources: ")
        rest, dash, tail = sources.partition(" — ")
        ordered = "; ".join(sorted(rest.split("; ")))
        lines.append(head + said + ordered + dash + tail if said else line)
    return lines


def _top5(client: httpx.Client, agent: str, query: str) -> list[str]:
    found = client.post(f"/v1/agents/{agent}/recall", json={"query": query, "top_k": 5})
    assert found.status_code == 200, found.text
    return [r["memory_id"] for r in found.json()["results"]]


def _contradictions(client: httpx.Client) -> int:
    found = client.get("/v1/knowledge/contradictions", params={"status": "open", "limit": 1000})
    return len(found.json()["contradictions"])


def test_a_tenant_exported_and_imported_twice_is_the_same_tenant(platform: Platform) -> None:
    source_key = create_tenant(platform.env, "transfer-source")
    target_key = create_tenant(platform.env, "transfer-target")
    with platform.client(source_key, 120) as src, platform.client(target_key, 300) as dst:
        agents = [src.post("/v1/agents", json={"name": f"a{i}"}).json()["agent_id"] for i in (0, 1)]
        _fill(src, agents)
        _knowledge(src)
        _settled(src, agents, MEMORIES)
        first = _listing(src, agents[0])[0]
        edited = src.patch(
            f"/v1/agents/{agents[0]}/memories/{first['memory_id']}",
            json={"content": first["content"] + " (corrected)", "reason": "typo"},
        )
        assert edited.status_code == 202, edited.text
        until(
            lambda: (
                _count(src, agents[0])["by_status"].get("superseded") == 1
                and _count(src, agents[0])["by_status"].get("pending", 0) == 0
            ),
            "the edit stored",
        )
        expiring = {"content": "the gate code is 4711", "expires_at": _soon(4)}
        answer = src.post(f"/v1/agents/{agents[1]}/memories", json=expiring)
        assert answer.status_code == 202, answer.text
        until(
            lambda: _count(src, agents[1])["by_status"].get("expired") == 1,
            "the memory expired",
            30,
        )
        entities = _entities(src)
        assert len(entities) == CSV_ROWS + IMPORT_ROWS - CONTESTED
        until(lambda: _entity(src, "carrier:c1")["facts"] and _kind_seen(src), "the edit known")
        until(lambda: _contradictions(src) >= CONTESTED, "contradictions", 120)

        started = time.monotonic()
        exported = src.get("/v1/export")
        assert exported.status_code == 200, exported.text
        export_seconds = time.monotonic() - started
        counts = _checksum_counts(exported.content)
        assert counts["memory"] == MEMORIES + 2
        assert counts["record"] == CSV_ROWS + IMPORT_ROWS + 1
        assert counts["document"] == 1

        started = time.monotonic()
        answer = dst.post(
            "/v1/import",
            content=exported.content,
            headers={"content-type": "application/x-ndjson"},
        )
        assert answer.status_code == 200, answer.text
        report = answer.json()
        assert report["memories"]["written"] == MEMORIES + 2
        assert report["records"] == {
            "queued": CSV_ROWS + IMPORT_ROWS,
            "curator_edits": 1,
            "events": report["records"]["events"],
        }
        new_agents = [report["agents"]["ids"][a] for a in agents]
        ids = report["memories"]["ids"]
        _settled(dst, new_agents, MEMORIES)
        until(lambda: len(_entities(dst)) == len(entities), "every entity", 120)
        until(lambda: _contradictions(dst) == _contradictions(src), "contradictions", 120)
        until(lambda: _kind_seen(dst), "the curator's edit", 60)
        edited_was, edited_now = _entity(src, "carrier:c1"), _entity(dst, "carrier:c1")
        assert edited_was == edited_now, "\n".join(
            ["source:", *edited_was["article"], "target:", *edited_now["article"]]
        )
        import_seconds = time.monotonic() - started
        print(f"export {export_seconds:.1f}s, import to settled {import_seconds:.1f}s")

        for old, new in zip(agents, new_agents, strict=True):
            assert _count(dst, new)["by_status"] == _count(src, old)["by_status"]
            was = sorted(_listing(src, old), key=lambda m: (m["created_at"], ids[m["memory_id"]]))
            now = _listing(dst, new)
            assert [ids[m["memory_id"]] for m in was] == [m["memory_id"] for m in now]
            for before, after in zip(was, now, strict=True):
                assert {k: before.get(k) for k in SHOWN} == {k: after.get(k) for k in SHOWN}
                assert ids.get(before.get("supersedes")) == after.get("supersedes")
                assert ids.get(before.get("superseded_by")) == after.get("superseded_by")
        history = src.get(f"/v1/agents/{agents[0]}/memories/{first['memory_id']}/history").json()
        copied = dst.get(
            f"/v1/agents/{new_agents[0]}/memories/{ids[first['memory_id']]}/history"
        ).json()
        assert [
            (v.get("edit_reason"), v.get("author"), v.get("created_at"))
            for v in history["versions"]
        ] == [
            (v.get("edit_reason"), v.get("author"), v.get("created_at")) for v in copied["versions"]
        ]
        for status in ("superseded", "expired"):
            listed = dst.get(f"/v1/agents/{new_agents[0]}/memories", params={"status": status})
            assert listed.status_code == 200, listed.text

        rng = random.Random(7)
        sample = [*rng.sample(entities, 40), "carrier:c1", "carrier:c2"]
        for entity in sample:
            assert _entity(dst, entity) == _entity(src, entity), entity

        for i in range(QUERIES):
            query = " ".join(rng.sample(WORDS, 3))
            old, new = agents[i % AGENTS], new_agents[i % AGENTS]
            assert [ids[m] for m in _top5(src, old, query)] == _top5(dst, new, query), query

        restored = _revisions(dst)
        assert len(restored) == len(_revisions(src)) == CSV_ROWS + IMPORT_ROWS + 1
        again = dst.post(
            "/v1/import",
            content=exported.content,
            headers={"content-type": "application/x-ndjson"},
        )
        assert again.status_code == 200, again.text
        assert again.json()["memories"]["written"] == 0
        assert again.json()["memories"]["present"] == MEMORIES + 2
        time.sleep(3)
        assert sum(_count(dst, a)["count"] for a in new_agents) == MEMORIES + 2
        assert len(_entities(dst)) == len(entities)
        assert _revisions(dst) == restored


def _revisions(client: httpx.Client) -> dict[str, int]:
    """Every record's revision, by id (a second import must revise none, nor add any)."""
    found: dict[str, int] = {}
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 500, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/records", params=params)
        assert page.status_code == 200, page.text
        found.update({r["record_id"]: r["revision"] for r in page.json()["records"]})
        cursor = page.json()["next_cursor"]
        if cursor is None:
            return found


def _soon(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def _kind_seen(client: httpx.Client) -> bool:
    """The curator's value is among carrier:c1's facts."""
    return any(f[0] == "city" and "human" in f[4] for f in _entity(client, "carrier:c1")["facts"])


def _checksum_counts(data: bytes) -> dict[str, int]:
    last = json.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    assert last["kind"] == "checksum"
    counts: dict[str, int] = last["counts"]
    return counts


def test_an_export_with_vectors_is_imported_without_embedding_again(platform: Platform) -> None:
    source_key = create_tenant(platform.env, "vectors-source")
    target_key = create_tenant(platform.env, "vectors-target")
    with platform.client(source_key, 120) as src, platform.client(target_key, 120) as dst:
        agent = src.post("/v1/agents", json={"name": "v"}).json()["agent_id"]
        rng = random.Random(5)
        for start in range(0, 300, 100):
            memories = [{"content": _content(rng, n)} for n in range(start, start + 100)]
            answer = src.post(f"/v1/agents/{agent}/memories:batch", json={"memories": memories})
            assert answer.status_code == 202, answer.text
        _settled(src, [agent], 300)
        exported = src.get("/v1/export", params={"vectors": "true", "knowledge": "false"})
        assert exported.status_code == 200, exported.text
        lines = [json.loads(line) for line in exported.content.splitlines()]
        assert lines[0]["vectors"] is True
        carried: list[dict[str, Any]] = [line for line in lines if line["kind"] == "memory"]
        assert all(len(m["vector"]) == m["vector_provenance"]["dimension"] for m in carried)
        answer = dst.post(
            "/v1/import", content=exported.content, headers={"content-type": "application/x-ndjson"}
        )
        assert answer.status_code == 200, answer.text
        ids = answer.json()["memories"]["ids"]
        new_agent = answer.json()["agents"]["ids"][agent]
        _settled(dst, [new_agent], 300)
        for _ in range(10):
            query = " ".join(rng.sample(WORDS, 3))
            assert [ids[m] for m in _top5(src, agent, query)] == _top5(dst, new_agent, query)
