"""Extraction's routes read what the composition root installed, through `ExtractionDeps`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from engram_extraction import api
from engram_extraction.api import ExtractionDeps
from engram_extraction.domain.heads import RecordHead
from engram_extraction.domain.schema import SchemaRegistry
from engram_extraction.service.types import RecordTypes
from engram_platform.dependencies import install
from engram_platform.problems import install_problem_handlers
from tests.support.internal import accept_internal_calls, internal_headers
from tests.unit.extraction.fakes import FakeTypeStore

pytestmark = pytest.mark.unit
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def head(record_id: str, **fields: Any) -> RecordHead:
    given: dict[str, Any] = {
        "tenant_id": "tnt_a",
        "record_id": record_id,
        "record_type": "carrier",
        "entity_id": f"carrier:{record_id}",
        "status": "active",
        "revision": 1,
        "attributes": {"name": "Acme"},
        "content_sha256": "ab" * 32,
        "lineage": {"document_id": "doc_1", "locator": "row:2"},
        "updated_at": AT,
    }
    return RecordHead(**{**given, **fields})


class FakeReads:
    """The `RecordReads` port over a dict of heads, for one tenant."""

    def __init__(self, heads: list[RecordHead]) -> None:
        self.heads = {h.record_id: h for h in heads}
        self.asked: list[dict[str, Any]] = []

    async def record(self, tenant_id: str, record_id: str) -> RecordHead | None:
        found = self.heads.get(record_id) if tenant_id == "tnt_a" else None
        return replace(found, revisions=()) if found else None

    async def list_records(
        self,
        tenant_id: str,
        *,
        filters: dict[str, str],
        after: tuple[datetime, str] | None,
        limit: int,
    ) -> list[RecordHead]:
        self.asked.append({"filters": filters, "after": after, "limit": limit})
        ordered = sorted(self.heads.values(), key=lambda h: h.record_id)
        if after is not None:
            ordered = [h for h in ordered if h.record_id > after[1]]
        return ordered[:limit]

    async def import_status(self, tenant_id: str, import_id: str) -> dict[str, Any] | None:
        return {"import_id": import_id, "status": "completed"} if import_id == "imp_1" else None

    async def live_among(self, tenant_id: str, record_ids: Sequence[str]) -> int:
        found = [self.heads.get(rid) for rid in record_ids]
        return sum(1 for h in found if h is not None and h.status == "active")

    async def known(self, tenant_id: str, record_ids: Sequence[str]) -> set[str]:
        return {r for r in record_ids if r in self.heads} if tenant_id == "tnt_a" else set()


class FakePassageReads:
    """Three passages of one document's current version, `v2`, for tenant `tnt_a`."""

    rows: list[dict[str, Any]] = [
        {
            "passage_id": f"psg_{i}",
            "ordinal": i,
            "name": "returns.md",
            "heading_path": ["Returns policy"],
            "start": 10 * i,
            "end": 10 * i + 9,
            "page": None,
            "page_end": None,
            "text": f"passage {i}",
            "text_sha256": "0" * 64,
            "tenant_id": "tnt_a",
        }
        for i in range(3)
    ]

    async def current_passages(
        self, tenant_id: str, document_id: str, after: int, limit: int
    ) -> tuple[str, list[dict[str, Any]]] | None:
        if tenant_id != "tnt_a" or document_id != "doc_1":
            return None
        return "v2", [row for row in self.rows if row["ordinal"] > after][:limit]

    async def live_passages_of(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        return len(self.rows) if tenant_id == "tnt_a" and "doc_1" in document_ids else 0


async def get(reads: FakeReads, method: str, path: str, **kwargs: Any) -> httpx.Response:
    app = FastAPI()
    accept_internal_calls(app)
    install_problem_handlers(app)
    app.include_router(api.router)
    app.include_router(api.passages_router)
    types = RecordTypes(FakeTypeStore(), SchemaRegistry())
    install(app, ExtractionDeps(records=reads, passages=FakePassageReads(), types=types))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://extraction") as client:
        return await client.request(method, path, headers=internal_headers("tnt_a"), **kwargs)


async def test_a_record_is_shown_with_its_lineage_and_a_missing_one_is_404() -> None:
    reads = FakeReads([head("r1", lineage={"document_id": "doc_1", "model": "m7"})])
    shown = await get(reads, "GET", "/internal/v1/records/r1")
    assert shown.status_code == 200
    body = shown.json()
    assert body["attributes"] == {"name": "Acme"} and body["revisions"] == []
    assert body["lineage"] == {
        "document_id": "doc_1",
        "document_version": None,
        "locator": "",
        "source_item_id": None,
        "model": "m7",
    }
    assert (await get(reads, "GET", "/internal/v1/records/r9")).status_code == 404


async def test_the_listing_pages_with_a_cursor_and_passes_the_filters() -> None:
    reads = FakeReads([head(f"r{n}") for n in range(3)])
    first = (await get(reads, "GET", "/internal/v1/records", params={"limit": 2})).json()
    assert [r["record_id"] for r in first["records"]] == ["r0", "r1"]
    params = {"limit": 2, "cursor": first["next_cursor"], "type": "carrier"}
    rest = (await get(reads, "GET", "/internal/v1/records", params=params)).json()
    assert [r["record_id"] for r in rest["records"]] == ["r2"] and rest["next_cursor"] is None
    assert reads.asked[-1]["filters"] == {"record_type": "carrier"}
    assert reads.asked[-1]["after"][1] == "r1" and reads.asked[-1]["limit"] == 3
    bad = await get(reads, "GET", "/internal/v1/records", params={"cursor": "nonsense"})
    assert bad.status_code == 422


async def test_imports_and_prune_verification_read_the_installed_store() -> None:
    reads = FakeReads([head("r1"), head("r2", status="tombstoned")])
    assert (await get(reads, "GET", "/internal/v1/imports/imp_1")).json()["status"] == "completed"
    assert (await get(reads, "GET", "/internal/v1/imports/imp_2")).status_code == 404
    verified = await get(reads, "POST", "/internal/v1/prune/verify", json={"records": ["r1", "r2"]})
    assert verified.json() == {"references": {"records": 1, "passages": 0}}
    body = {"records": [], "documents": ["doc_1"]}
    left = await get(reads, "POST", "/internal/v1/prune/verify", json=body)
    assert left.json() == {"references": {"records": 0, "passages": 3}}


async def test_known_names_only_the_tenants_records() -> None:
    reads = FakeReads([head("rec_1")])
    answer = await get(reads, "POST", "/internal/v1/known", json={"ids": ["rec_1", "rec_2"]})
    assert answer.status_code == 200 and answer.json() == {"known": ["rec_1"]}


async def test_passages_are_listed_in_order_and_paged_after_an_ordinal() -> None:
    reads = FakeReads([])
    first = await get(reads, "GET", "/internal/v1/documents/doc_1/passages", params={"limit": 2})
    assert first.status_code == 200, first.text
    body = first.json()
    assert (body["version"], body["name"], body["next_after"]) == ("v2", "returns.md", 1)
    assert [p["passage_id"] for p in body["passages"]] == ["psg_0", "psg_1"]
    assert "tenant_id" not in body["passages"][0]
    rest = await get(reads, "GET", "/internal/v1/documents/doc_1/passages", params={"after": 1})
    assert [p["ordinal"] for p in rest.json()["passages"]] == [2]
    assert rest.json()["next_after"] is None
    missing = await get(reads, "GET", "/internal/v1/documents/doc_2/passages")
    assert missing.status_code == 404
