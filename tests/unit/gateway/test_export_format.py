"""The export format: a manifest first, a checksum last; an altered, truncated or newer-version
file is refused with the line and what is wrong."""

from __future__ import annotations

import json

import pytest

from engram_gateway.domain import export_format
from engram_gateway.domain.export_format import ExportRefused, Reader, Writer

pytestmark = pytest.mark.unit


def _file() -> list[bytes]:
    writer = Writer()
    lines = [
        writer.raw(export_format.manifest("tnt_a", "2026-12-05T00:00:00+00:00", {}), "manifest"),
        writer.line("agent", {"agent_id": "agt_1", "name": None}),
        writer.line("retention", {"agent_id": "agt_1", "rules": []}),
        writer.line("memory", {"memory_id": "mem_1", "agent_id": "agt_1", "content": "hi"}),
    ]
    return [*lines, writer.checksum()]


def _read(lines: list[bytes]) -> dict[str, object]:
    reader = Reader()
    for line in lines:
        reader.feed(line)
    return reader.finish()


def test_every_line_names_its_kind_and_version_and_the_last_counts_them() -> None:
    lines = _file()
    parsed = [json.loads(line) for line in lines]
    assert [p["kind"] for p in parsed] == ["manifest", "agent", "retention", "memory", "checksum"]
    assert {p["v"] for p in parsed} == {export_format.VERSION}
    assert parsed[0]["format"] == "engram-export" and parsed[0]["tenant_id"] == "tnt_a"
    assert parsed[-1]["counts"] == {
        "agent": 1,
        "retention": 1,
        "memory": 1,
        "record_type": 0,
        "document": 0,
        "record": 0,
    }
    assert _read(lines)["tenant_id"] == "tnt_a"


def test_an_altered_line_fails_the_checksum() -> None:
    lines = _file()
    lines[3] = lines[3].replace(b'"hi"', b'"ho"')
    with pytest.raises(ExportRefused, match="line 5: checksum mismatch"):
        _read(lines)


def test_a_newer_version_is_refused_naming_both_versions() -> None:
    lines = _file()
    lines[1] = lines[1].replace(b'"v":1', b'"v":2')
    with pytest.raises(ExportRefused, match=r"line 2: format version 2 is not supported.*1"):
        _read(lines)


def test_a_file_cut_before_its_checksum_is_refused() -> None:
    with pytest.raises(ExportRefused, match="without its checksum line"):
        _read(_file()[:-1])


def test_the_first_line_must_be_the_manifest() -> None:
    with pytest.raises(ExportRefused, match="line 1: the first line must be the manifest"):
        _read(_file()[1:])


def test_nothing_may_follow_the_checksum() -> None:
    lines = _file()
    with pytest.raises(ExportRefused, match="line 6: content after the checksum"):
        _read([*lines, lines[1]])


def test_unknown_kinds_and_non_json_are_refused() -> None:
    lines = _file()
    with pytest.raises(ExportRefused, match="line 2: unknown kind 'relation_type'"):
        _read([lines[0], b'{"kind":"relation_type","v":1}\n'])
    with pytest.raises(ExportRefused, match="line 2: not a JSON object"):
        _read([lines[0], b"not json\n"])
    with pytest.raises(ExportRefused, match="the file is empty"):
        _read([])


def test_a_checksum_that_miscounts_its_lines_is_refused() -> None:
    lines = _file()
    last = json.loads(lines[-1])
    last["counts"]["memory"] = 2
    bad = json.dumps(last).encode() + b"\n"
    with pytest.raises(ExportRefused, match="counts 2 memory lines, the file holds 1"):
        _read([*lines[:-1], bad])


def test_a_checksum_line_whose_counts_are_not_an_object_is_refused() -> None:
    lines = _file()
    last = json.loads(lines[-1])
    last["counts"] = [1, 1, 1]
    with pytest.raises(ExportRefused, match="counts are not an object"):
        _read([*lines[:-1], json.dumps(last).encode()])
