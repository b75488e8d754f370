"""The optional LLM extractor, run by the real service against a local chat-completions stub."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.extraction.conftest import Pipeline
from tests.support.llm_stub import STUB_MODEL, LlmStub

CANARY = "canary-llm-9d41-content"
NOTE = f"Acme Freight (code ACM) sails barges from Gdansk to Riga. {CANARY}\n"
GARBLED = f"Borealis Lines, a carrier nobody can parse. {CANARY}\n"
ROWS = [
    {"type": "carrier", "attributes": {"id": "ACM", "name": "Acme Freight", "route": CANARY}},
    {"type": "port", "attributes": {"id": "riga", "country": "LV"}},
    {"type": "carrier", "attributes": {"name": "no id"}},
]


@pytest.fixture
def stub() -> Iterator[LlmStub]:
    server = LlmStub().start()
    yield server
    server.stop()


def finished(doc: dict) -> bool:
    return doc.get("status") in {"extracted", "failed"}


async def test_prose_becomes_records_with_the_served_model_in_lineage(
    make_pipeline: Callable[..., Awaitable[Pipeline]], stub: LlmStub, tmp_path: Path
) -> None:
    schemas = tmp_path / "schemas.json"
    carrier = {"name": "carrier", "id_fields": ["id"], "required_fields": ["id", "name"]}
    schemas.write_text(json.dumps({"version": 1, "types": [carrier]}))
    stub.answer("Acme Freight", records=ROWS)
    stub.answer("Borealis", content='{"records": [{"type": "carrier", "attributes": {')
    stub.fail(503, times=2)
    pipeline = await make_pipeline(
        ENGRAM_EXTRACTION_LLM_BASE_URL=stub.url,
        ENGRAM_EXTRACTION_LLM_MODEL="configured-model",
        ENGRAM_EXTRACTION_LLM_API_KEY="sk-stub-key",
        ENGRAM_EXTRACTION_SCHEMA_PATH=str(schemas),
    )
    accepted = await pipeline.submit("note.txt", NOTE, mime="text/plain")
    doc = await pipeline.document_when(accepted["document_id"], finished)
    assert doc["status"] == "extracted", doc
    assert (doc["record_count"], doc["rejected_count"]) == (2, 1)
    assert doc["attempts"] == 3, "two 503s were retried by the consumer"

    records = {r["entity_id"]: r for r in await pipeline.records(document_id=doc["document_id"])}
    assert set(records) == {"carrier:ACM", "port:riga"}
    acme = (await pipeline.client.get(f"/v1/records/{records['carrier:ACM']['record_id']}")).json()
    assert acme["lineage"] == {
        "document_id": accepted["document_id"],
        "document_version": accepted["version"],
        "locator": "llm:item/0",
        "source_item_id": "note.txt",
        "model": STUB_MODEL,
        "type_definition": {"origin": "bundled", "version": 1},
    }
    assert acme["revisions"][0]["lineage"]["model"] == STUB_MODEL

    served = [c for c in stub.calls if "Acme Freight" in c.user_text]
    assert len(served) == 3 and served[-1].authorization == "Bearer sk-stub-key"
    assert served[-1].body["model"] == "configured-model"
    form = served[-1].body["response_format"]
    assert form["type"] == "json_schema"
    items = form["json_schema"]["schema"]["properties"]["records"]["items"]["anyOf"]
    assert items[0]["properties"]["type"]["const"] == "carrier", "built from the registry"

    garbled = await pipeline.submit("other.txt", GARBLED, mime="text/plain")
    failed = await pipeline.document_when(garbled["document_id"], finished)
    assert failed["status"] == "failed"
    assert failed["error"].startswith("the model's output is not valid JSON")

    csv = await pipeline.submit("carriers.csv", "id,name\nc1,Acme\n")
    assert (await pipeline.document_when(csv["document_id"], finished))["status"] == "extracted"
    assert not [c for c in stub.calls if "c1,Acme" in c.user_text], "CSV never reaches the model"
    logs = pipeline.extraction.logs()
    assert STUB_MODEL in logs and CANARY not in logs, "ids and hashes logged, never content"
