"""The built-in extractors: rows, locators, rejected candidates and document-level failures."""

from __future__ import annotations

import pytest

from engram_extraction.domain.candidates import ExtractionFailed, Limits
from engram_extraction.domain.extractors import extract

pytestmark = pytest.mark.unit
LIMITS = Limits(max_columns=50, max_records=100, max_value_chars=100)


def test_csv_rows_become_candidates_with_row_locators() -> None:
    out = extract(b"id,name,city\nc1,Acme,Paris\n\nc2,Beta,\n", "text/csv", "carriers.csv", LIMITS)
    assert out.extractor == "csv"
    assert [c.locator for c in out.candidates] == ["row 2", "row 4"]
    assert out.candidates[0].attributes == {"id": "c1", "name": "Acme", "city": "Paris"}
    assert out.candidates[1].attributes == {"id": "c2", "name": "Beta"}


def test_csv_row_wider_than_header_is_rejected_not_dropped() -> None:
    out = extract(b"id,name\nc1,Acme,extra\nc2,Beta\n", "text/csv", "x.csv", LIMITS)
    assert out.candidates[0].problem == "row has 3 fields, the header has 2"
    assert out.candidates[1].problem is None


def test_tsv_and_duplicate_or_blank_headers() -> None:
    out = extract(b"id\tname\tname\t\nc1\ta\tb\tz\n", "text/tab-separated-values", "t.tsv", LIMITS)
    assert out.candidates[0].attributes == {"id": "c1", "name": "a", "name_2": "b", "column_4": "z"}


def test_too_many_columns_fails_the_document_before_reading_rows() -> None:
    header = ",".join(f"c{i}" for i in range(10_000)).encode()
    with pytest.raises(ExtractionFailed, match="10000 columns"):
        extract(header + b"\n" + b"1," * 9_999 + b"1\n", "text/csv", "wide.csv", LIMITS)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"\x00\x01\x02garbage", "NUL"),
        (b"id,name\nc1,\xff\xfe\n", "not valid UTF-8"),
        (b"id,name\n", "no records"),
    ],
)
def test_unreadable_documents_fail_with_a_clear_reason(content: bytes, reason: str) -> None:
    with pytest.raises(ExtractionFailed, match=reason):
        extract(content, "text/csv", "x.csv", LIMITS)


def test_json_array_object_of_arrays_and_single_object() -> None:
    arr = extract(
        b'[{"id": "a", "addr": {"city": "Oslo"}, "tags": ["x"]}, 3]',
        "application/json",
        "a.json",
        LIMITS,
    )
    assert arr.candidates[0].attributes == {"id": "a", "addr.city": "Oslo", "tags.0": "x"}
    assert arr.candidates[0].locator == "$[0]"
    assert arr.candidates[1].problem == "expected an object, found int"
    grouped = extract(
        b'{"carriers": [{"id": "c1"}], "meta": 1}', "application/json", "d.json", LIMITS
    )
    assert grouped.candidates[0].locator == "$.carriers[0]"
    assert grouped.candidates[0].type_hint == "carrier"
    single = extract(b'{"id": "only"}', "application/json", "one.json", LIMITS)
    assert single.candidates[0].locator == "$"


def test_invalid_json_fails_and_bad_ndjson_lines_are_rejected() -> None:
    with pytest.raises(ExtractionFailed, match="invalid JSON at line 1"):
        extract(b"{nope", "application/json", "x.json", LIMITS)
    out = extract(b'{"id": 1}\n{bad\n\n{"id": 2}\n', "application/x-ndjson", "x.ndjson", LIMITS)
    assert [(c.locator, c.problem is None) for c in out.candidates] == [
        ("line 1", True),
        ("line 2", False),
        ("line 4", True),
    ]


def test_markdown_tables_and_key_value_text() -> None:
    md = b"# Carriers\n\n| id | name |\n|---|:---:|\n| c1 | Acme \\| Co |\n| c2 | Beta |\n\ntext\n"
    out = extract(md, "text/markdown", "c.md", LIMITS)
    assert [c.attributes for c in out.candidates] == [
        {"id": "c1", "name": "Acme | Co"},
        {"id": "c2", "name": "Beta"},
    ]
    assert out.candidates[0].locator == "table 1 line 5"
    kv = extract(b"id: c1\nname: Acme\n\nnoise line\nid: c2\n", "text/plain", "n.txt", LIMITS)
    assert [c.attributes for c in kv.candidates] == [{"id": "c1", "name": "Acme"}, {"id": "c2"}]
    assert [c.locator for c in kv.candidates] == ["line 1", "line 5"]


def test_over_long_values_are_rejected_candidates() -> None:
    out = extract(b"id,note\nc1," + b"x" * 101 + b"\n", "text/csv", "x.csv", LIMITS)
    assert "longer than 100" in (out.candidates[0].problem or "")


def test_json_values_storage_cannot_keep_are_rejected_candidates_not_silent_changes() -> None:
    raw = b'[{"id": "c1", "n": NaN}, {"id": "c2", "n": 1e400}, {"id": "c3", "n": 1180591620717411303424}, {"id": "c4", "n": 7}]'
    out = extract(raw, "application/json", "x.json", LIMITS)
    problems = [c.problem for c in out.candidates]
    assert problems[:2] == ["attribute 'n': numbers must be finite (no NaN or Infinity)"] * 2
    assert problems[2] == "attribute 'n': integers must fit in signed 64 bits"
    assert problems[3] is None and out.candidates[3].attributes == {"id": "c4", "n": 7}


def test_unknown_type_fails() -> None:
    with pytest.raises(ExtractionFailed, match="no extractor"):
        extract(b"abc", "application/pdf", "x.pdf", LIMITS)


def test_deeply_nested_json_fails_cleanly() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ExtractionFailed, match="nested too deeply"):
        extract(deep, "application/json", "deep.json", LIMITS)
    nested = b'{"a": ' * 5000 + b"1" + b"}" * 5000
    with pytest.raises(ExtractionFailed, match="nested too deeply"):
        extract(nested, "application/json", "deep.json", LIMITS)


def test_markdown_key_value_blocks_are_read_like_plain_text() -> None:
    note = (
        b"# Supplier notes\n\nid: s-101\nname: Acme Supplies\ncity: Berlin\n\n"
        b"Some prose about them.\n\n- **id**: s-102\n- **name**: Beta Parts\n\n"
        b"| id | name |\n|---|---|\n| s-103 | Gamma |\n"
    )
    out = extract(note, "text/markdown", "notes.md", LIMITS)
    assert [c.attributes for c in out.candidates] == [
        {"id": "s-103", "name": "Gamma"},
        {"id": "s-101", "name": "Acme Supplies", "city": "Berlin"},
        {"id": "s-102", "name": "Beta Parts"},
    ]
    assert [c.locator for c in out.candidates] == ["table 1 line 14", "line 3", "line 9"]
