"""A tenant's export, imported into another tenant through the write path: new ids derived from
the source, a second run writes nothing, and a refused file writes nothing at all."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from engram_events import Envelope
from engram_events.content import ContentLimits
from engram_events.payloads.memories import MemoryWriteRequested
from engram_events.payloads.records import FactEditRequested, RecordsRestoreRequested
from engram_gateway.domain import export_format
from engram_gateway.domain.export_format import Writer
from engram_gateway.domain.model import Agent, Caller
from engram_gateway.service.audit import AuditTrail
from engram_gateway.service.intake import Intake
from engram_gateway.service.memory_writes import MemoryWrites
from engram_gateway.service.tenant_export import TYPES_PATH, TenantExport
from engram_gateway.service.tenant_import import TenantImport
from engram_platform.internal import KNOWN_PATH
from engram_platform.problems import Problem
from tests.support.audit_fakes import AuditEntries

pytestmark = pytest.mark.unit

SOURCE, TARGET = "tnt_src", "tnt_dst"
PROVENANCE = {
    "provider": "hashing",
    "model_id": "hashing-3",
    "weights_sha256": "0" * 64,
    "dimension": 3,
    "normalized": True,
    "precision": "fp32",
    "fingerprint": "f" * 64,
}


class MemoryService:
    """The memory service's internal routes the transfer calls, over rows held in a dict; a
    published write becomes a row at once."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.rules: dict[str, list[dict[str, Any]]] = {}
        self.records: list[dict[str, Any]] = []
        self.vectors: dict[str, list[float]] = {}
        self.types: dict[tuple[str, str], dict[str, Any]] = {}
        self.type_puts = 0

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kw: Any
    ) -> httpx.Response:
        body = kw.get("json") or {}
        mine = [r for r in self.rows.values() if r["tenant_id"] == tenant_id]
        if path == "/internal/v1/memories/count":
            count = sum(r["agent_id"] in body["agent_ids"] for r in mine)
            return httpx.Response(200, json={"count": count, "by_status": {"active": count}})
        if path == "/internal/v1/memories/query":
            rows = sorted(
                (r for r in mine if r["agent_id"] in body["agent_ids"]),
                key=lambda r: r["memory_id"],
            )
            start = int(body["cursor"] or 0)
            page = rows[start : start + body["limit"]]
            more = start + body["limit"] < len(rows)
            views = [{k: v for k, v in r.items() if k != "tenant_id"} for r in page]
            cursor = str(start + body["limit"]) if more else None
            return httpx.Response(200, json={"memories": views, "next_cursor": cursor})
        if path.endswith("/retention"):
            agent = path.split("/")[-2]
            if method == "PUT":
                self.rules[agent] = body["rules"]
            return httpx.Response(200, json={"rules": self.rules.get(agent, [])})
        if path == "/internal/v1/memories/vectors":
            found = {m: self.vectors[m] for m in body["ids"] if m in self.vectors}
            return httpx.Response(200, json={"provenance": PROVENANCE, "vectors": found})
        if path == "/internal/v1/records:export":
            start = int(kw["params"].get("cursor") or 0)
            page = self.records[start : start + kw["params"]["limit"]]
            more = start + len(page) < len(self.records)
            cursor = str(start + len(page)) if more else None
            return httpx.Response(200, json={"records": page, "next_cursor": cursor})
        if path.startswith("/internal/v1/documents/"):
            doc = {"document_id": path.rsplit("/", 1)[-1], "name": "c.csv", "status": "extracted"}
            return httpx.Response(200, json={**doc, "error": None})
        if path == TYPES_PATH:
            declared = [
                {"name": name, "origin": "tenant", "definition": definition}
                for (tenant, name), definition in sorted(self.types.items())
                if tenant == tenant_id
            ]
            bundled = {"name": "example_contact", "origin": "bundled", "definition": {}}
            return httpx.Response(200, json={"types": [bundled, *declared]})
        if path.startswith(f"{TYPES_PATH}/"):
            name = path.rsplit("/", 1)[-1]
            if method == "PUT":
                self.types[tenant_id, name] = body
                self.type_puts += 1
            if (tenant_id, name) not in self.types:
                return httpx.Response(404, json={"detail": "no such record type"})
            definition = self.types[tenant_id, name]
            return httpx.Response(
                200, json={"name": name, "origin": "tenant", "definition": definition}
            )
        if path == KNOWN_PATH:
            known = sorted(set(body["ids"]) & {r["memory_id"] for r in mine})
            return httpx.Response(200, json={"known": known})
        raise AssertionError(f"unexpected call {method} {path}")

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]:
        """The duplicate lookup: no live memory holds any of the writes."""
        assert path.endswith("/memories/duplicates")
        return 200, json.dumps({"found": [None for _ in json.loads(body)["items"]]}).encode()

    def store(self, tenant_id: str, memory_id: str, agent_id: str, content: str) -> None:
        self.rows[memory_id] = {
            "tenant_id": tenant_id,
            "memory_id": memory_id,
            "agent_id": agent_id,
            "content": content,
            "type": "note",
            "metadata": {"n": len(self.rows)},
            "status": "active",
            "provenance": {"model": "hashing"},
        }


class Sink:
    """Kafka: every published write is stored by the fake memory service."""

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory
        self.published = 0
        self.fail_after: int | None = None
        self.knowledge: list[Envelope[Any]] = []
        self.writes: list[MemoryWriteRequested] = []

    async def publish(self, event: Envelope[Any]) -> None:
        await self.publish_many([event])

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None:
        if self.fail_after is not None and self.published >= self.fail_after:
            raise RuntimeError("the broker went away")
        for event in events:
            p = event.payload
            if isinstance(p, MemoryWriteRequested):
                self.memory.store(event.tenant_id, p.memory_id, p.agent_id, p.content)
                self.writes.append(p)
            else:
                self.knowledge.append(event)
            self.published += 1


class Log:
    async def record(self, tenant_id: str, kind: str, item_id: str, **f: Any) -> None:
        return None

    async def record_many(self, tenant_id: str, kind: str, items: list[Any]) -> int:
        return len(items)

    async def get(self, tenant_id: str, kind: str, item_id: str) -> None:
        return None

    async def release(self, tenant_id: str, kind: str, item_id: str) -> None:
        return None


class Agents:
    def __init__(self) -> None:
        self.made: dict[tuple[str, str], str | None] = {}

    async def ensure_agent(self, tenant_id: str, agent_id: str, name: str | None) -> str:
        created = (tenant_id, agent_id) not in self.made
        self.made[(tenant_id, agent_id)] = name
        return "created" if created else "present"


def _world() -> tuple[MemoryService, Sink, Agents, TenantImport]:
    memory = MemoryService()
    sink = Sink(memory)
    agents = Agents()
    writes = MemoryWrites(memory, Intake(sink, Log()))
    trail = AuditTrail(AuditEntries(), memory)
    importer = TenantImport(memory, agents, writes, ContentLimits(), sink, trail)
    return memory, sink, agents, importer


def audited(importer: TenantImport) -> AuditEntries:
    """The entries the importer's audit trail recorded."""
    assert isinstance(importer.audit.store, AuditEntries)
    return importer.audit.store


async def _export(memory: MemoryService, agent_ids: list[str]) -> bytes:
    export = TenantExport(memory)
    now = datetime.now(UTC)
    agents = [Agent(agent_id=a, tenant_id=SOURCE, name=a, created_at=now) for a in agent_ids]
    plan = await export.plan(SOURCE, agents)
    return b"".join([line async for line in export.stream(plan)])


async def _body(data: bytes, size: int = 97) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def test_an_import_writes_every_memory_under_new_ids_once() -> None:
    memory, sink, _, importer = _world()
    for n in range(1250):
        memory.store(SOURCE, f"mem_{n:05d}", "agt_a" if n % 2 else "agt_b", f"fact {n}")
    memory.rules["agt_a"] = [{"type": "note", "max_count": 10}]
    data = await _export(memory, ["agt_a", "agt_b"])
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))

    first = await importer.run(caller, _body(data))
    again = await importer.run(caller, _body(data))

    assert first.written == 1250 and first.present == 0 and first.agents_created == 2
    assert again.written == 0 and again.present == 1250 and again.agents_created == 0
    assert sink.published == 1250
    assert first.memories == again.memories
    assert set(first.memories.values()).isdisjoint(first.memories)
    copied = {r["memory_id"]: r for r in memory.rows.values() if r["tenant_id"] == TARGET}
    for old, new in first.memories.items():
        assert copied[new]["content"] == memory.rows[old]["content"]
        assert copied[new]["agent_id"] == first.agents[memory.rows[old]["agent_id"]]
    assert memory.rules[first.agents["agt_a"]] == [{"type": "note", "max_count": 10}]
    audit = audited(importer)
    started = audit.of("import.started")
    assert len(started) == 2 and started[0].counts == {
        "agent": 2,
        "retention": 2,
        "memory": 1250,
        "record_type": 0,
        "document": 0,
        "record": 0,
    }
    finished = {e.target["import_id"]: e for e in audit.of("import.finished")}
    assert finished[first.import_id].counts["memories_written"] == 1250
    assert finished[again.import_id].counts["memories_present"] == 1250
    assert {e.actor.key_id for e in finished.values()} == {"k"}


async def test_a_refused_file_writes_nothing() -> None:
    memory, sink, agents, importer = _world()
    memory.store(SOURCE, "mem_1", "agt_a", "the only fact")
    data = await _export(memory, ["agt_a"])
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))
    for bad, said in (
        (data.replace(b"the only fact", b"the only fakt"), "checksum mismatch"),
        (data.rsplit(b"\n", 2)[0] + b"\n", "without its checksum line"),
        (data.replace(b'"v":1', b'"v":9', 1), "format version 9"),
    ):
        with pytest.raises(Problem) as refused:
            await importer.run(caller, _body(bad))
        assert refused.value.status == 422 and said in refused.value.detail
    assert sink.published == 0 and not agents.made
    assert not audited(importer).entries


async def test_a_run_cut_midway_is_finished_by_the_next() -> None:
    memory, sink, _, importer = _world()
    for n in range(450):
        memory.store(SOURCE, f"mem_{n:05d}", "agt_a", f"fact {n}")
    data = await _export(memory, ["agt_a"])
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))
    sink.fail_after = 200
    with pytest.raises(Problem) as cut:
        await importer.run(caller, _body(data))
    assert cut.value.status == 503 and sink.published == 200
    sink.fail_after = None

    finished = await importer.run(caller, _body(data))

    assert (finished.written, finished.present) == (250, 200)
    assert sum(r["tenant_id"] == TARGET for r in memory.rows.values()) == 450


async def test_lines_naming_no_listed_agent_are_refused_by_line() -> None:
    _, sink, _, importer = _world()
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))
    strays: list[Any] = [{}, ["agt_a"], "agt_other", None]
    for stray in strays:
        writer = Writer()
        lines = [
            writer.raw(export_format.manifest(SOURCE, "now", {}), "manifest"),
            writer.line("agent", {"agent_id": "agt_a", "name": None}),
            writer.line("memory", {"memory_id": "m1", "agent_id": stray, "content": "x"}),
        ]
        body = b"".join([*lines, writer.checksum()])
        with pytest.raises(Problem) as refused:
            await importer.run(caller, _body(body))
        assert refused.value.detail == "line 3: memory line of an agent not listed before it"
    assert sink.published == 0


def _record(n: int, **lineage: Any) -> dict[str, Any]:
    return {
        "record_id": f"rec_{n}",
        "record_type": "carrier",
        "entity_id": f"carrier:c{n}",
        "status": "active",
        "revision": 1,
        "attributes": {"id": f"c{n}", "city": f"City {n}"},
        "content_sha256": "0" * 64,
        "source_item": lineage.get("document_id") or "import:fleet",
        "lineage": {"locator": f"row {n}", "document_id": None, **lineage},
        "updated_at": "2026-12-05T10:00:00+00:00",
    }


async def test_records_are_restored_by_source_item_and_a_curators_as_its_edit_again() -> None:
    memory, sink, _, importer = _world()
    edit = {"key_id": "k1", "action": "assert", "reason": "called", "at": "2026-12-05T10:00:00Z"}
    memory.records = [
        *(_record(n, document_id="doc_a", document_version="v1") for n in range(1200)),
        *(_record(n, source_item_id="fleet") for n in range(1200, 1210)),
        {
            **_record(1),
            "attributes": {"city": "Gdansk"},
            "source_item": "human:ab",
            "revision": 2,
            "lineage": {"locator": "assert by key k1", "document_id": None, "edit": edit},
        },
        {**_record(2), "status": "tombstoned"},
    ]
    data = await _export(memory, [])
    lines = [json.loads(line) for line in data.splitlines()]
    assert lines[-1]["counts"]["record"] == 1211 and lines[-1]["counts"]["document"] == 1
    assert [x["kind"] for x in lines].index("document") < [x["kind"] for x in lines].index("record")
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))

    report = await importer.run(caller, _body(data, 4096))

    restores = [e.payload for e in sink.knowledge if isinstance(e.payload, RecordsRestoreRequested)]
    edits = [e.payload for e in sink.knowledge if isinstance(e.payload, FactEditRequested)]
    assert (report.records, report.edits) == (1210, 1)
    assert [len(r.records) for r in restores] == [500, 500, 200, 10]
    new_doc = report.documents["doc_a"]
    assert {r.document_id for r in restores[:3]} == {new_doc} != {None}
    assert {r.source_item for r in restores} == {new_doc, "import:fleet"}
    assert restores[3].document_id is None and restores[3].source_item_id == "fleet"
    assert edits[0].entity_id == "carrier:c1" and edits[0].value == "Gdansk"
    assert edits[0].edit.key_id == "k1" and edits[0].edit.reason == "called"

    first = [e.event_id for e in sink.knowledge]
    sink.knowledge.clear()
    await importer.run(caller, _body(data, 4096))
    assert [e.event_id for e in sink.knowledge] == first


async def test_a_tenants_own_record_types_travel_before_its_records_and_once() -> None:
    memory, _, _, importer = _world()
    carrier = {"id_fields": ["carrier_id"], "required_fields": ["carrier_id"]}
    memory.types[SOURCE, "carrier"] = carrier
    memory.records = [_record(1, document_id="doc_a", document_version="v1")]
    data = await _export(memory, [])
    lines = [json.loads(line) for line in data.splitlines()]
    kinds = [x["kind"] for x in lines]
    assert kinds.count("record_type") == 1 and kinds.index("record_type") < kinds.index("record")
    assert lines[kinds.index("record_type")]["definition"] == carrier
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))

    report = await importer.run(caller, _body(data))
    again = await importer.run(caller, _body(data))

    assert memory.types[TARGET, "carrier"] == carrier
    assert (report.record_types, again.record_types, memory.type_puts) == (1, 0, 1)


async def test_a_record_line_extraction_would_refuse_is_refused_by_line() -> None:
    _, sink, _, importer = _world()
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))
    writer = Writer()
    bad = {**_record(1), "record_type": "Not A Type"}
    lines = [writer.raw(export_format.manifest(SOURCE, "now", {}), "manifest")]
    lines.append(writer.line("record", bad))
    with pytest.raises(Problem) as refused:
        await importer.run(caller, _body(b"".join([*lines, writer.checksum()])))
    assert refused.value.detail.startswith("line 2: record record_type")
    assert sink.published == 0


async def test_an_edited_memory_keeps_its_history_time_key_and_reason_and_expired_travel() -> None:
    memory, sink, _, importer = _world()
    for n, status in enumerate(("superseded", "active", "expired", "rejected")):
        memory.store(SOURCE, f"mem_{n}", "agt_a", f"fact {n}")
        memory.rows[f"mem_{n}"].update(status=status, created_at=f"2026-01-0{n + 1}T10:00:00Z")
    memory.rows["mem_1"].update(
        supersedes="mem_0", edit_reason="typo", author={"key_id": "key_src", "role": "admin"}
    )
    memory.rows["mem_2"]["expires_at"] = "2026-02-01T00:00:00Z"
    data = await _export(memory, ["agt_a"])
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))

    report = await importer.run(caller, _body(data))

    older, newer, expired = sink.writes
    assert report.written == 3 and "mem_3" not in report.memories
    assert newer.supersedes == older.memory_id == report.memories["mem_0"]
    assert newer.reason == "typo" and newer.author is not None
    assert newer.author.key_id == "key_src" and older.author is not None
    assert older.author.key_id == "k" and older.reason is None
    assert older.created_at == datetime(2026, 1, 1, 10, tzinfo=UTC)
    assert expired.expires_at == datetime(2026, 2, 1, tzinfo=UTC)


class NoExtraction(MemoryService):
    """The owners with extraction down."""

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kw: Any
    ) -> httpx.Response:
        if service == "extraction":
            return httpx.Response(503, json={})
        return await super().request(service, method, path, tenant_id=tenant_id, **kw)


async def test_an_export_whose_records_cannot_be_read_is_a_503_before_any_line() -> None:
    owners = NoExtraction()
    with pytest.raises(Problem) as refused:
        await TenantExport(owners).plan(SOURCE, [])
    assert refused.value.status == 503
    assert (await TenantExport(owners).plan(SOURCE, [], knowledge=False)).manifest


async def test_an_export_with_vectors_carries_them_into_the_writes() -> None:
    memory, sink, _, importer = _world()
    for n in range(3):
        memory.store(SOURCE, f"mem_{n}", "agt_a", f"fact {n}")
    memory.vectors = {"mem_0": [1.0, 0.0, 0.0], "mem_1": [0.0, 1.0, 0.0]}
    export = TenantExport(memory)
    agents = [Agent(agent_id="agt_a", tenant_id=SOURCE, name="a", created_at=datetime.now(UTC))]
    plan = await export.plan(SOURCE, agents, vectors=True)
    data = b"".join([line async for line in export.stream(plan)])
    assert json.loads(data.splitlines()[0])["vectors"] is True
    caller = Caller(tenant_id=TARGET, key_id="k", roles=("admin",))

    await importer.run(caller, _body(data))

    carried = {w.content: w for w in sink.writes}
    assert carried["fact 0"].vector == [1.0, 0.0, 0.0]
    assert carried["fact 0"].vector_provenance is not None
    assert carried["fact 0"].vector_provenance.fingerprint == "f" * 64
    assert carried["fact 2"].vector is None and carried["fact 2"].vector_provenance is None
    bad = data.replace(b"[1.0,0.0,0.0]", b"[1.0,0.0]")
    with pytest.raises(Problem) as refused:
        await importer.run(caller, _body(bad))
    assert "vector's length" in refused.value.detail
