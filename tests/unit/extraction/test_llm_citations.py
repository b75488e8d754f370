"""Model rows cite the passages they were read from: the numbered request, the reply's numbers
mapped to passage ids, and a record revised when a new version's passages cite it."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from engram_extraction.domain.candidates import ExtractionFailed, Limits
from engram_extraction.domain.llm import LlmOptions, read_reply, request_body
from engram_extraction.domain.passages import Passage
from engram_extraction.domain.records import Draft
from engram_extraction.domain.revisions import plan
from engram_extraction.domain.schema import RecordSchema, SchemaRegistry
from engram_extraction.service.documents import DocumentExtraction
from engram_platform.chat import Reply
from tests.support.chat_fakes import FakeModel
from tests.unit.extraction.fakes import FakeOutbox, FakePassages, FakeStore, ingested

pytestmark = pytest.mark.unit
LIMITS = Limits(max_columns=50, max_records=100, max_value_chars=100)
REGISTRY = SchemaRegistry(
    [RecordSchema(name="carrier", id_fields=("code",), required_fields=("code", "name"))]
)
PASSAGES = [
    Passage(0, ("Fleet",), 8, 40, "Acme Freight runs barges to Riga."),
    Passage(1, ("Fleet", "Codes"), 52, 80, "Acme's code is ACM."),
]
IDS = ["psg_first", "psg_second"]
HANDBOOK = b"""# Fleet

Acme Freight runs barges between Gdansk and Riga.

## Codes

Acme Freight is known by the code ACM.
"""


def reply(*records: Mapping[str, object]) -> Reply:
    return Reply(json.dumps({"records": list(records)}), model="served-model")


def test_the_request_numbers_the_passages_and_asks_each_record_for_its_own() -> None:
    body = request_body("raw text", REGISTRY, LlmOptions(model="m"), PASSAGES)
    assert body["messages"][-1]["content"] == (
        "[P1]\nFleet\n\nAcme Freight runs barges to Riga.\n\n"
        "[P2]\nFleet > Codes\n\nAcme's code is ACM."
    )
    assert "`passages`" in body["messages"][0]["content"]
    schema = body["response_format"]["json_schema"]["schema"]
    for item in schema["properties"]["records"]["items"]["anyOf"]:
        assert "passages" in item["required"]
        assert item["properties"]["passages"] == {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 2},
        }


def test_without_passages_the_text_is_sent_and_no_passage_is_asked_for() -> None:
    body = request_body("raw text", REGISTRY, LlmOptions(model="m"))
    assert body["messages"][-1]["content"] == "raw text"
    items = body["response_format"]["json_schema"]["schema"]["properties"]["records"]["items"]
    assert all("passages" not in item["properties"] for item in items["anyOf"])


def test_numbered_passages_over_the_input_bound_are_not_sent() -> None:
    with pytest.raises(ExtractionFailed, match="the 2 numbered passages have 86 characters"):
        request_body("short", REGISTRY, LlmOptions(model="m", max_input_chars=80), PASSAGES)


def test_passage_numbers_become_the_passage_ids_they_name() -> None:
    extraction = read_reply(
        reply(
            {"type": "carrier", "attributes": {"code": "ACM"}, "passages": [2]},
            {"type": "port", "attributes": {"id": "riga"}, "passages": [2, "P1", 1]},
            {"type": "port", "attributes": {"id": "gdansk"}, "passages": "[P1]"},
        ),
        LIMITS,
        IDS,
    )
    assert [c.passage_ids for c in extraction.candidates] == [
        ("psg_second",),
        ("psg_first", "psg_second"),
        ("psg_first",),
    ]
    assert extraction.unknown_citations == 0


def test_a_number_naming_no_passage_sent_is_dropped_and_the_record_kept() -> None:
    extraction = read_reply(
        reply(
            {"type": "carrier", "attributes": {"code": "ACM"}, "passages": [3, 2]},
            {"type": "port", "attributes": {"id": "riga"}, "passages": [0, "the first", True]},
            {"type": "port", "attributes": {"id": "oslo"}},
        ),
        LIMITS,
        IDS,
    )
    assert [(c.attributes, c.passage_ids, c.problem) for c in extraction.candidates] == [
        ({"code": "ACM"}, ("psg_second",), None),
        ({"id": "riga"}, (), None),
        ({"id": "oslo"}, (), None),
    ]
    assert extraction.unknown_citations == 4


def test_passage_numbers_are_ignored_when_no_passages_were_sent() -> None:
    extraction = read_reply(
        reply({"type": "port", "attributes": {"id": "riga"}, "passages": [1]}), LIMITS
    )
    assert extraction.candidates[0].passage_ids == ()
    assert extraction.unknown_citations == 0


def draft(*passage_ids: str) -> Draft:
    return Draft(
        "rec_1", "carrier", "carrier:ACM", {"code": "ACM"}, "c" * 64, "llm:item/0", passage_ids
    )


def test_the_same_content_citing_a_new_versions_passages_is_a_new_revision() -> None:
    first = plan([draft("psg_v1")], {}, "v1", complete=True)
    again = plan([draft("psg_v1")], first.manifest, "v1b", complete=True)
    moved = plan([draft("psg_v2")], first.manifest, "v2", complete=True)
    assert (again.unchanged, again.revised) == (1, [])
    assert [(c.draft.passage_ids, c.revision) for c in moved.revised] == [(("psg_v2",), 2)]


def test_a_record_citing_nothing_keeps_the_fingerprint_manifests_already_hold() -> None:
    assert draft().fingerprint == "c" * 16


async def test_a_model_row_cites_the_announced_passage_it_was_read_from() -> None:
    store, outbox = FakeStore(), FakeOutbox()
    row = {"type": "carrier", "attributes": {"code": "ACM", "name": "Acme"}, "passages": [2]}
    model = FakeModel(reply(row))
    documents = DocumentExtraction(
        store,
        REGISTRY,
        outbox,
        passages=FakePassages(),
        model=model,
        model_options=LlmOptions(model="configured-model"),
    )
    events = await documents.extract(ingested(HANDBOOK, name="fleet.md", mime="text/markdown"))
    passages = [e.payload for e in events if e.event_type == "passage.upserted"]
    (record,) = [e.payload for e in events if e.event_type == "record.upserted"]
    assert [p.heading_path for p in passages] == [["Fleet"], ["Fleet", "Codes"]]
    assert record.lineage.passage_ids == [passages[1].passage_id]
    assert record.lineage.locator == "llm:item/0"
    sent = model.bodies[0]["messages"][-1]["content"]
    assert sent.startswith("[P1]\nFleet\n\n") and "[P2]\nFleet > Codes\n\n" in sent
