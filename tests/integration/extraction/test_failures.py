"""Failures are visible and the pipeline keeps running; a crash loses and duplicates nothing."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from pymongo import MongoClient

from engram_events import encode, new_event
from engram_events.catalog import DOCUMENT_SUBMITTED
from engram_events.payloads.documents import DocumentSubmitted
from tests.conftest import Infra
from tests.integration.extraction.conftest import Pipeline
from tests.support.kafka import produce, read_all, wait_for
from tests.support.polling import until, until_async


def _topic(names: dict[str, str], base: str) -> str:
    return f"{names['ENGRAM_TOPIC_PREFIX']}{base}"


def _submitted(tenant: str, doc: str, name: str, content: bytes) -> bytes:
    """What a connector would publish: bytes the gateway would have refused."""
    sha = hashlib.sha256(content).hexdigest()
    payload = DocumentSubmitted(
        document_id=doc,
        version=sha[:16],
        source="file_drop",
        source_item_id=name,
        name=name,
        mime="text/csv",
        content_sha256=sha,
        size_bytes=len(content),
        content_base64=base64.b64encode(content).decode(),
    )
    return encode(new_event(DOCUMENT_SUBMITTED, payload, tenant_id=tenant))


def finished(doc: dict[str, Any]) -> bool:
    return doc.get("status") in {"extracted", "failed"}


async def test_unparseable_document_shows_failed_with_its_error(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    accepted = await pipeline.submit("broken.json", "{nope", mime="application/json")
    doc = await pipeline.document_when(accepted["document_id"], finished)
    assert doc["status"] == "failed"
    assert doc["error"] == "invalid JSON at line 1 column 2"
    assert doc["attempts"] >= 1 and doc["record_count"] == 0

    await pipeline.submit("broken.json", "{nope", mime="application/json")
    failures = await wait_for(
        infra.bootstrap,
        _topic(names, "engram.documents.v1"),
        lambda m: m.get("event_type") == "document.extraction_failed",
        count=2,
    )
    assert len(failures) == 2, "a failed version is not deduplicated: resubmitting retries it"
    doc = await pipeline.document_when(accepted["document_id"], finished)
    assert doc["status"] == "failed" and doc["error"] == "invalid JSON at line 1 column 2"


async def test_bad_input_gets_a_clear_error_and_the_pipeline_keeps_running(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    wide = ",".join(f"c{i}" for i in range(10_000)) + "\n" + ",".join("1" * 10_000) + "\n"
    wide_doc = await pipeline.submit("wide.csv", wide)
    tenant = _tenant_of(infra, names)
    bad = {
        "doc_empty": b"   \n",
        "doc_garbage": bytes(range(256)) * 4,
        "doc_latin1": "id,name\nc1,Café\n".encode("latin-1"),
    }
    await produce(
        infra.bootstrap,
        _topic(names, "engram.documents.v1"),
        [_submitted(tenant, doc, f"{doc}.csv", content) for doc, content in bad.items()],
    )
    expected = {
        "doc_empty": "the document is empty",
        "doc_garbage": "the document contains NUL bytes (binary content)",
        "doc_latin1": "the document is not valid UTF-8 (invalid byte at 14)",
    }
    for doc_id, error in expected.items():
        doc = await pipeline.document_when(doc_id, finished)
        assert (doc["status"], doc["error"]) == ("failed", error)
    doc = await pipeline.document_when(wide_doc["document_id"], finished)
    assert doc["status"] == "failed" and "10000 columns" in doc["error"]

    good = await pipeline.submit("carriers.csv", "id,name\nc1,Acme\n")
    assert (await pipeline.document_when(good["document_id"], finished))["status"] == "extracted"
    for proc in (pipeline.ingest, pipeline.extraction, pipeline.gateway):
        assert proc.proc is not None and proc.proc.poll() is None


async def test_kill9_mid_document_loses_and_duplicates_nothing(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    rows = 6000
    csv = "id,name,score\n" + "".join(f"k{i},name {i},{i % 97}\n" for i in range(rows))
    accepted = await pipeline.submit("scores.csv", csv)
    db = MongoClient[dict[str, Any]](infra.mongodb_uri)[
        f"{names['ENGRAM_DATABASE_PREFIX']}extraction"
    ]
    until(
        lambda: db.record_revisions.estimated_document_count(),
        "the first revisions written (extraction is mid-document)",
        60,
        0.05,
    )
    pipeline.extraction.kill9()
    written_before = db.records.count_documents({})
    pipeline.extraction.start()

    doc = await pipeline.document_when(
        accepted["document_id"], lambda d: d["status"] == "extracted", timeout=180
    )
    assert doc["record_count"] == rows
    assert db.records.count_documents({}) == rows
    assert db.record_revisions.count_documents({}) == rows
    assert sorted({r["revision"] for r in db.records.find({}, {"revision": 1})}) == [1]

    async def upserts_by_record() -> dict[str, set[str]]:
        messages = await read_all(
            infra.bootstrap, _topic(names, "engram.record-events.v1"), settle=2.0
        )
        found: dict[str, set[str]] = {}
        for m in messages:
            if m and m.get("event_type") == "record.upserted":
                found.setdefault(m["payload"]["record_id"], set()).add(m["event_id"])
        return found

    upserts = await until_async(
        upserts_by_record,
        f"{rows} records announced ({written_before} heads were written before the crash)",
        120,
        0,
        ready=lambda found: len(found) >= rows,
    )
    assert len(upserts) == rows, f"{written_before} heads were written before the crash"
    assert all(len(ids) == 1 for ids in upserts.values()), "one event id per record revision"


def _tenant_of(infra: Infra, names: dict[str, str]) -> str:
    """The tenant the pipeline fixture created (the only one in this test's gateway database)."""
    db = MongoClient[dict[str, Any]](infra.mongodb_uri)[f"{names['ENGRAM_DATABASE_PREFIX']}gateway"]
    (tenant,) = [t["_id"] for t in db.tenants.find({}, {"_id": 1})]
    return str(tenant)


async def test_a_submission_ingest_dead_letters_shows_failed_with_the_reason(
    pipeline: Pipeline, infra: Infra, names: dict[str, str]
) -> None:
    first = await pipeline.submit("carriers.csv", "id,name\nc1,Acme\n")
    await pipeline.document_when(first["document_id"], finished)
    tenant = _tenant_of(infra, names)
    submitted = _submitted(tenant, "doc_tampered", "tampered.csv", b"id,name\nc1,Acme\n")
    tampered = _with_sha(submitted, "0" * 64)
    await produce(infra.bootstrap, _topic(names, "engram.documents.v1"), [tampered])
    doc = await pipeline.document_when("doc_tampered", finished)
    assert doc["status"] == "failed"
    assert (
        doc["error"] == "dead_lettered: PermanentError: content_sha256 does not match the content"
    )
    letters = await wait_for(
        infra.bootstrap,
        _topic(names, "engram.dlq.v1"),
        lambda m: m.get("consumer") == "ingest" and m.get("tenant_id") == tenant,
    )
    assert letters[0]["attempts"] == 1


def _with_sha(value: bytes, sha: str) -> bytes:
    """The same submission declaring another content hash."""
    body = json.loads(value)
    body["payload"]["content_sha256"] = sha
    return json.dumps(body).encode()
