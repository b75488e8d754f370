"""Ingest's routes read what the composition root installed, through `IngestDeps`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from engram_ingest import api
from engram_ingest.api import IngestDeps
from engram_ingest.api.views import document_view
from engram_ingest.domain.documents import ExtractEntry, StoredDocument
from engram_platform.dependencies import install
from engram_platform.problems import install_problem_handlers
from tests.support.internal import accept_internal_calls, internal_headers

pytestmark = pytest.mark.unit
DOC = StoredDocument(
    document_id="doc_1",
    status="active",
    latest_version="v2",
    name="carriers.csv",
    mime="text/csv",
    source="gateway",
    extract_log={
        "v1": ExtractEntry("v1", "failed", attempts=3, last_error="unreadable"),
        "v2": ExtractEntry("v2", "extracted", attempts=1, record_count=4, rejected_count=1),
    },
)


class FakeReads:
    """The `DocumentReads` port over one document of tenant `tnt_a`."""

    async def document(self, tenant_id: str, document_id: str) -> StoredDocument | None:
        return DOC if (tenant_id, document_id) == ("tnt_a", "doc_1") else None

    async def remaining(self, tenant_id: str, document_ids: list[str]) -> tuple[int, int]:
        return len(document_ids), 0

    async def known(self, tenant_id: str, document_ids: Sequence[str]) -> set[str]:
        return {d for d in document_ids if (tenant_id, d) == ("tnt_a", "doc_1")}


async def call(method: str, path: str, **kwargs: Any) -> httpx.Response:
    app = FastAPI()
    accept_internal_calls(app)
    install_problem_handlers(app)
    app.include_router(api.router)
    install(app, IngestDeps(documents=FakeReads()))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://ingest") as client:
        return await client.request(method, path, headers=internal_headers("tnt_a"), **kwargs)


async def test_a_document_shows_its_latest_version_and_every_version_it_had() -> None:
    body = (await call("GET", "/internal/v1/documents/doc_1")).json()
    assert (body["status"], body["record_count"], body["rejected_count"]) == ("extracted", 4, 1)
    assert [(v["version"], v["status"]) for v in body["versions"]] == [
        ("v1", "failed"),
        ("v2", "extracted"),
    ]
    assert body["error"] is None and body["versions"][0]["last_error"] == "unreadable"
    assert (await call("GET", "/internal/v1/documents/doc_9")).status_code == 404


async def test_a_deleted_document_reads_deleted_and_one_without_versions_pending() -> None:
    assert document_view(replace(DOC, status="deleted"))["status"] == "deleted"
    fresh = document_view(StoredDocument("doc_2", "active", latest_version="v1"))
    assert (fresh["status"], fresh["record_count"], fresh["versions"]) == ("pending", 0, [])


async def test_prune_verification_reads_the_installed_store() -> None:
    verified = await call("POST", "/internal/v1/prune/verify", json={"documents": ["a", "b"]})
    assert verified.json() == {"references": {"documents": 2, "blobs": 0}}


async def test_known_names_only_the_tenants_documents() -> None:
    answer = await call("POST", "/internal/v1/known", json={"ids": ["doc_1", "doc_9"]})
    assert answer.status_code == 200 and answer.json() == {"known": ["doc_1"]}
    refused = await call("POST", "/internal/v1/known", json={"ids": ["doc_1"], "more": 1})
    assert refused.status_code == 422
