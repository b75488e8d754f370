"""The write contract's value types: what storage keeps as given passes unchanged, the rest is
refused with a stable error type (the gateway's 422 and the consumers' validation share them)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from engram_events.ids import Scalar
from engram_events.payloads.memories import MemoryWriteRequested
from engram_events.payloads.records import ImportRow
from engram_events.values import INT64_MAX, INT64_MIN, Metadata, Text, value_problem

pytestmark = pytest.mark.unit


class Holder(BaseModel):
    metadata: Metadata = {}
    value: Scalar = None
    text: Text = ""
    row: ImportRow = {"id": 1}


def _error_types(**fields: object) -> list[str]:
    with pytest.raises(ValidationError) as refused:
        Holder.model_validate(fields)
    return [e["type"] for e in refused.value.errors()]


@pytest.mark.parametrize("key", ["a.b", "$where", ".", "", "x\x00y", "k" * 65, "é", "a b"])
def test_metadata_keys_outside_the_plain_name_grammar_are_refused(key: str) -> None:
    assert _error_types(metadata={key: 1}) == ["string_pattern_mismatch"]


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (float("nan"), "non_finite_number"),
        (float("inf"), "non_finite_number"),
        (float("-inf"), "non_finite_number"),
        (INT64_MAX + 1, "int64_overflow"),
        (INT64_MIN - 1, "int64_overflow"),
        (2**70, "int64_overflow"),
        ("\ud800", "invalid_unicode"),
    ],
)
def test_unstorable_values_are_refused_wherever_a_value_is_stored(value: object, kind: str) -> None:
    assert _error_types(metadata={"k": value}) == [kind]
    assert _error_types(value=value) == [kind]
    assert _error_types(row={"n": value}) == [kind]


def test_storable_values_pass_unchanged_with_their_types() -> None:
    values = {"max": INT64_MAX, "min": INT64_MIN, "f": 0.1, "t": True, "s": "a.b $c", "n": None}
    held = Holder(metadata=values, row=values)
    assert held.metadata == values == held.row
    assert [type(v) for v in held.metadata.values()] == [type(v) for v in values.values()]


def test_nested_values_and_too_many_keys_are_refused() -> None:
    assert _error_types(metadata={"k": {"nested": 1}})
    assert _error_types(metadata={"k": [1, 2]})
    assert _error_types(metadata={f"k{i}": i for i in range(257)}) == ["too_long"]


def test_text_refuses_only_what_cannot_be_encoded() -> None:
    assert Holder(text="naïve — 東京 \U0001f600").text == "naïve — 東京 \U0001f600"
    assert _error_types(text="lone \udfff") == ["invalid_unicode"]


def test_the_event_a_consumer_decodes_holds_the_same_contract() -> None:
    good = {"memory_id": "m1", "agent_id": "a1", "content": "x", "metadata": {"source-url": "u"}}
    assert MemoryWriteRequested.model_validate(good).metadata == {"source-url": "u"}
    with pytest.raises(ValidationError):
        MemoryWriteRequested.model_validate({**good, "metadata": {"source.url": "u"}})


def test_value_problem_names_each_reason() -> None:
    assert [value_problem(v) for v in (1, 1.5, "s", None, False)] == [None] * 5
    assert value_problem(float("nan")) == "non_finite_number"
    assert value_problem(2**64) == "int64_overflow"
    assert value_problem("\ud800") == "invalid_unicode"
