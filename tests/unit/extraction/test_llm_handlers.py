"""Documents through the LLM extractor, over fakes: validation, lineage, failures, no content."""

from __future__ import annotations

import json
import logging

import pytest

from engram_extraction.domain.candidates import ExtractionFailed
from engram_extraction.domain.llm import LlmOptions
from engram_extraction.domain.schema import RecordSchema, SchemaRegistry
from engram_extraction.service.documents import DocumentExtraction
from engram_platform.chat import ModelUnavailable, Reply
from engram_platform.retry import PermanentError
from tests.support.chat_fakes import FakeModel
from tests.unit.extraction.fakes import CANARY, FakeOutbox, FakePassages, FakeStore, ingested

pytestmark = pytest.mark.unit
REGISTRY = SchemaRegistry(
    [RecordSchema(name="carrier", id_fields=("code",), required_fields=("code", "name"))]
)
PROSE = f"Acme Freight (code ACM) sails to Riga. {CANARY}".encode()
ROWS = [
    {"type": "carrier", "attributes": {"code": "ACM", "name": "Acme Freight", "note": CANARY}},
    {"type": "carrier", "attributes": {"code": "BOR"}},
]


def extraction(store: FakeStore, outbox: FakeOutbox, model: FakeModel) -> DocumentExtraction:
    return DocumentExtraction(
        store,
        REGISTRY,
        outbox,
        passages=FakePassages(),
        max_attempts=3,
        model=model,
        model_options=LlmOptions(model="configured-model"),
    )


async def test_model_rows_are_validated_and_carry_the_served_model_in_lineage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    store, outbox = FakeStore(), FakeOutbox()
    model = FakeModel(Reply(json.dumps({"records": ROWS}), model="served-model-v7"))
    events = await extraction(store, outbox, model).extract(
        ingested(PROSE, name="notes.txt", mime="text/plain")
    )
    (upserted,) = [e.payload for e in events if e.event_type == "record.upserted"]
    assert upserted.entity_id == "carrier:ACM"
    assert upserted.lineage.locator == "llm:item/0"
    assert upserted.lineage.model == "served-model-v7"
    summary = events[-1].payload
    assert (summary.extractor, summary.record_count, summary.rejected_count) == ("llm", 1, 1)
    assert [(r.locator, r.reason) for r in store.rejected] == [
        ("llm:item/1", "missing required field(s): name")
    ]
    assert model.bodies[0]["model"] == "configured-model"
    assert CANARY not in caplog.text, "neither the document nor the model's output is logged"


async def test_structured_documents_never_reach_the_model() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    model = FakeModel(ModelUnavailable("must not be called"))
    events = await extraction(store, outbox, model).extract(ingested(b"code,name\nACM,Acme\n"))
    assert events[-1].payload.extractor == "csv" and model.bodies == []


async def test_malformed_output_fails_the_document_at_once_with_a_clear_reason() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    model = FakeModel(Reply('{"records": [{"type": "carrier", "attri', model="m"))
    (failed,) = await extraction(store, outbox, model).extract(
        ingested(PROSE, name="notes.txt", mime="text/plain")
    )
    assert failed.event_type == "document.extraction_failed" and failed.payload.permanent
    assert failed.payload.error == "the model's output is not valid JSON (line 1 column 34)"
    assert store.heads == {} and store.attempts == {}


async def test_an_unavailable_endpoint_is_retried_then_dead_lettered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    store, outbox = FakeStore(), FakeOutbox()
    model = FakeModel(ModelUnavailable("the model endpoint answered HTTP 503"))
    event = ingested(PROSE, name="notes.txt", mime="text/plain")
    for _ in range(2):
        with pytest.raises(ModelUnavailable):
            await extraction(store, outbox, model).extract(event)
    with pytest.raises(PermanentError):
        await extraction(store, outbox, model).extract(event)
    (failed,) = outbox.staged
    assert failed.payload.error == "extraction failed after 3 attempts (ModelUnavailable)"
    assert not failed.payload.permanent and len(model.bodies) == 3
    assert CANARY not in caplog.text


async def test_a_refused_request_is_a_permanent_failure() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    model = FakeModel(ExtractionFailed("the model endpoint refused the request (HTTP 400)"))
    (failed,) = await extraction(store, outbox, model).extract(
        ingested(PROSE, name="notes.txt", mime="text/plain")
    )
    assert failed.payload.error == "the model endpoint refused the request (HTTP 400)"


async def test_prose_the_model_finds_no_rows_in_keeps_its_passages() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    model = FakeModel(Reply(json.dumps({"records": []}), model="m"))
    events = await extraction(store, outbox, model).extract(
        ingested(PROSE, name="notes.txt", mime="text/plain")
    )
    assert [e.event_type for e in events] == ["passage.upserted", "document.extracted"]
    assert (events[-1].payload.record_count, events[-1].payload.passage_count) == (0, 1)


async def test_prose_too_long_for_the_model_is_kept_as_passages_without_a_call() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    model = FakeModel(ModelUnavailable("must not be called"))
    documents = DocumentExtraction(
        store,
        REGISTRY,
        outbox,
        passages=FakePassages(),
        model=model,
        model_options=LlmOptions(model="configured-model", max_input_chars=10),
    )
    events = await documents.extract(ingested(PROSE, name="notes.txt", mime="text/plain"))
    assert events[-1].event_type == "document.extracted" and model.bodies == []
    assert events[-1].payload.passage_count == 1
