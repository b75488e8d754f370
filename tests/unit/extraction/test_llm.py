"""The LLM extractor's pure part: which documents go to it, the request, and reading the reply."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from engram_extraction.config import ExtractionSettings
from engram_extraction.domain.candidates import Extraction, ExtractionFailed, Limits
from engram_extraction.domain.extractors import Unstructured, extract, extract_or_defer
from engram_extraction.domain.llm import LlmOptions, read_reply, request_body
from engram_extraction.domain.records import Source, build
from engram_extraction.domain.schema import RecordSchema, SchemaRegistry
from engram_platform.chat import Reply

pytestmark = pytest.mark.unit
LIMITS = Limits(max_columns=50, max_records=100, max_value_chars=100)
REGISTRY = SchemaRegistry(
    [RecordSchema(name="carrier", id_fields=("code",), required_fields=("code", "name"))]
)
PROSE = b"Acme Freight runs barges between Gdansk and Riga. Its code is ACM."


@pytest.mark.parametrize(
    ("content", "mime", "name"),
    [
        (PROSE, "text/plain", "notes.txt"),
        (b"# Notes\n\nNo tables here, only prose.\n", "text/markdown", "notes.md"),
        (b"<p>Acme Freight</p>", "text/html", "page.html"),
    ],
)
def test_text_no_built_in_extractor_reads_is_deferred_to_the_model(
    content: bytes, mime: str, name: str
) -> None:
    found = extract_or_defer(content, mime, name, LIMITS)
    assert isinstance(found, Unstructured) and found.text == content.decode()
    with pytest.raises(ExtractionFailed):
        extract(content, mime, name, LIMITS)


@pytest.mark.parametrize(
    ("content", "mime", "reason"),
    [
        (b"id,name\n", "text/csv", "no records found by the csv extractor"),
        (b"{nope", "application/json", "invalid JSON at line 1 column 2"),
        (b"\x00\x01binary", "application/pdf", "the document contains NUL bytes (binary content)"),
        (b"  \n", "text/plain", "the document is empty"),
    ],
)
def test_broken_structured_or_binary_content_still_fails(
    content: bytes, mime: str, reason: str
) -> None:
    with pytest.raises(ExtractionFailed, match=reason.replace("(", r"\(").replace(")", r"\)")):
        extract_or_defer(content, mime, "doc", LIMITS)


def test_rows_a_built_in_extractor_finds_are_never_sent_to_the_model() -> None:
    found = extract_or_defer(b"name: Acme\ncity: Riga\n", "text/plain", "a.txt", LIMITS)
    assert isinstance(found, Extraction) and found.extractor == "key_value"


def test_the_request_asks_for_json_shaped_by_the_registry() -> None:
    body = request_body("some text", REGISTRY, LlmOptions(model="configured-model"))
    assert body["model"] == "configured-model" and body["temperature"] == 0.0
    assert body["messages"][-1] == {"role": "user", "content": "some text"}
    form = body["response_format"]
    assert form["type"] == "json_schema" and form["json_schema"]["name"] == "engram_records"
    items = form["json_schema"]["schema"]["properties"]["records"]["items"]["anyOf"]
    declared, other = items
    assert declared["properties"]["type"]["const"] == "carrier"
    assert declared["properties"]["attributes"]["required"] == ["code", "name"]
    assert other["properties"]["type"]["not"] == {"enum": ["carrier"]}
    json.dumps(body)


def test_without_declared_types_any_type_is_asked_for() -> None:
    form = request_body("t", SchemaRegistry(), LlmOptions(model="m", temperature=None))
    assert "temperature" not in form
    items = form["response_format"]["json_schema"]["schema"]["properties"]["records"]["items"]
    assert items["properties"]["type"] == {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}


def test_text_over_the_input_limit_fails_before_any_call() -> None:
    with pytest.raises(ExtractionFailed, match="11 characters; the LLM extractor reads at most 10"):
        request_body("x" * 11, REGISTRY, LlmOptions(model="m", max_input_chars=10))


def test_reply_rows_become_located_candidates_validated_like_any_other() -> None:
    records = [
        {"type": "carrier", "attributes": {"code": "ACM", "name": "Acme", "hq": {"city": "Riga"}}},
        {"type": "carrier", "attributes": {"code": "BOR"}},
        "not an object",
        {"type": "Port", "attributes": {"id": "gdansk", "country": "PL"}},
        {"type": "port"},
    ]
    reply = Reply(json.dumps({"records": records}), model="served-model-v7")
    extraction = read_reply(reply, LIMITS)
    assert extraction.extractor == "llm" and extraction.model == "served-model-v7"
    assert [c.locator for c in extraction.candidates] == [f"llm:item/{i}" for i in range(5)]
    assert extraction.candidates[0].attributes == {"code": "ACM", "name": "Acme", "hq.city": "Riga"}

    source = Source("tnt_a", "doc_1", "note", document_id="doc_1", model=extraction.model)
    built = build(extraction.candidates, source, REGISTRY)
    assert [(d.entity_id, d.locator) for d in built.drafts] == [
        ("carrier:ACM", "llm:item/0"),
        ("port:gdansk", "llm:item/3"),
    ]
    assert [(r.locator, r.reason) for r in built.rejected] == [
        ("llm:item/1", "missing required field(s): name"),
        ("llm:item/2", "expected an object, found str"),
        ("llm:item/4", "the item has no attributes object"),
    ]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply('{"records": [{"type": "carrier"', "m"), "not valid JSON (line 1 column 32)"),
        (
            Reply('{"records": [', "m", finish_reason="length"),
            "not valid JSON (line 1 column 14) (the output was cut off at the token limit)",
        ),
        (Reply('["a list"]', "m"), "has no `records` array"),
        (Reply(None, "m"), "the model returned no output"),
        (Reply(None, "m", refused=True), "the model refused to extract this document"),
    ],
)
def test_a_reply_that_is_not_the_promised_json_fails_the_document(
    reply: Reply, reason: str
) -> None:
    with pytest.raises(ExtractionFailed) as failed:
        read_reply(reply, LIMITS)
    assert reason in str(failed.value)
    assert "carrier" not in str(failed.value), "the reason never quotes the output"


def test_half_an_llm_configuration_stops_start_up_without_showing_the_key() -> None:
    with pytest.raises(ValidationError) as refused:
        ExtractionSettings(llm_base_url="http://127.0.0.1:1/v1", llm_api_key="sk-hidden-key")
    assert "sk-hidden-key" not in str(refused.value)
    assert "set both" in str(refused.value)
    on = ExtractionSettings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m")
    assert on.llm_enabled and not ExtractionSettings().llm_enabled
