"""`engram export` writes the stream to a file and says whether its checksum line arrived;
`engram import` sends the file as it is and prints what the gateway did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram_client.cli import exit_codes
from engram_client.cli.main import main
from engram_client.transfer import ExportTally
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit

LINES = [
    {"kind": "manifest", "v": 1, "tenant_id": "tnt_a"},
    {"kind": "agent", "v": 1, "agent_id": "agt_1"},
    {"kind": "memory", "v": 1, "agent_id": "agt_1", "content": "tea at five"},
    {"kind": "memory", "v": 1, "agent_id": "agt_1", "content": "coffee at nine"},
    {"kind": "checksum", "v": 1, "sha256": "0" * 64, "counts": {"agent": 1, "memory": 2}},
]
FILE = b"".join(json.dumps(line).encode() + b"\n" for line in LINES)
ANSWER = {
    "source_tenant": "tnt_a",
    "agents": {"created": 1, "ids": {"agt_1": "agt_new"}},
    "retention": {"set": 1},
    "memories": {"written": 2, "present": 0, "ids": {"m1": "n1", "m2": "n2"}},
}


def run(env_file: Path, *argv: str) -> int:
    return int(main([*argv, "--env-file", str(env_file)]))


def test_the_tally_counts_lines_cut_across_chunks_once() -> None:
    tally = ExportTally()
    for start in range(0, len(FILE), 7):
        tally.feed(FILE[start : start + 7])
    assert tally.lines == 5 and tally.size == len(FILE)
    assert tally.kinds == {"manifest": 1, "agent": 1, "memory": 2, "checksum": 1}
    assert tally.checksum is not None and tally.checksum["counts"]["memory"] == 2


def test_export_writes_the_stream_and_summarises_it(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("GET", "/v1/export", Reply(200, FILE, content_type="application/x-ndjson"))
    out = tmp_path / "tenant.ndjson"
    assert run(env_file, "export", "agt_1", "--out", str(out)) == exit_codes.OK
    assert out.read_bytes() == FILE
    assert stub.seen("GET", "/v1/export")[0].query == {"agent_id": ["agt_1"]}
    assert "exported 1 agents, 2 memories" in capsys.readouterr().out


def test_export_flags_ask_for_vectors_or_leave_the_knowledge_out(
    stub: StubServer, env_file: Path, tmp_path: Path
) -> None:
    stub.on("GET", "/v1/export", Reply(200, FILE, content_type="application/x-ndjson"))
    out = str(tmp_path / "tenant.ndjson")
    assert run(env_file, "export", "--vectors", "--no-knowledge", "--out", out) == exit_codes.OK
    assert run(env_file, "export", "--out", out) == exit_codes.OK
    first, plain = stub.seen("GET", "/v1/export")
    assert first.query == {"vectors": ["true"], "knowledge": ["false"]}
    assert plain.query == {}


def test_an_export_without_its_checksum_line_fails(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = FILE.rsplit(b"\n", 2)[0] + b"\n"
    stub.on("GET", "/v1/export", Reply(200, cut, content_type="application/x-ndjson"))
    assert run(env_file, "export", "--out", str(tmp_path / "x")) == exit_codes.API_ERROR
    assert "cut before its checksum line" in capsys.readouterr().err


def test_export_needs_an_admin_key(stub: StubServer, env_file: Path, tmp_path: Path) -> None:
    stub.on("GET", "/v1/export", problem(403, "forbidden", "needs admin"))
    assert run(env_file, "export", "--out", str(tmp_path / "x")) == exit_codes.API_ERROR


def test_import_sends_the_file_as_it_is(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("POST", "/v1/import", Reply(200, ANSWER))
    source = tmp_path / "tenant.ndjson"
    source.write_bytes(FILE)
    assert run(env_file, "import", str(source)) == exit_codes.OK
    [sent] = stub.seen("POST", "/v1/import")
    assert sent.body == FILE and sent.headers["content-type"] == "application/x-ndjson"
    assert sent.headers["authorization"] == "Bearer egk_cli_key"
    printed = capsys.readouterr().out
    assert "2 memories written, 0 already there" in printed and "agt_1 -> agt_new" in printed


def test_import_of_a_missing_file_is_a_usage_error(env_file: Path) -> None:
    assert run(env_file, "import", "/nonexistent/tenant.ndjson") == exit_codes.USAGE
