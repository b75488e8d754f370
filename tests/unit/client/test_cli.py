"""The CLI's exit codes and output against the stub gateway (main() called in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram_client.cli.main import main
from tests.unit.client.stub import Reply, StubServer, problem

pytestmark = pytest.mark.unit


def run(env_file: Path, *argv: str) -> int:
    return int(main([*argv, "--env-file", str(env_file)]))


def test_not_found_exits_3_with_one_line_and_a_hint(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("GET", "/v1/documents/doc_x", problem(404, "not-found", "no such document"))
    assert run(env_file, "docs", "status", "doc_x") == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "engram: error: 404 not-found: no such document "
        "(check the id and that it belongs to this API key's tenant)"
    ]


def test_validation_errors_exit_1_and_say_where(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    errors = [{"loc": ["body", "older_than_days"], "msg": "must be >= 0"}]
    stub.on("POST", "/v1/prune", problem(422, "validation-error", "invalid", errors=errors))
    assert run(env_file, "prune", "--older-than-days", "-1") == 1
    assert "body.older_than_days: must be >= 0" in capsys.readouterr().err


@pytest.mark.parametrize(("verified", "code"), [(True, 0), (False, 5)])
def test_prune_follow_exits_0_only_when_verified_empty(
    stub: StubServer,
    env_file: Path,
    capsys: pytest.CaptureFixture[str],
    verified: bool,
    code: int,
) -> None:
    stub.on("POST", "/v1/prune", Reply(202, {"prune_job_id": "job_1", "status": "running"}))
    stub.on(
        "GET",
        "/v1/prune-jobs/job_1",
        Reply(
            200,
            {
                "prune_job_id": "job_1",
                "status": "completed",
                "counts": {"records": 2},
                "verified_empty": verified,
            },
        ),
    )
    assert run(env_file, "prune", "--record-id", "r1", "r2", "--follow", "--json") == code
    assert json.loads(capsys.readouterr().out)["verified_empty"] is verified
    assert stub.seen("POST", "/v1/prune")[0].json() == {"record_ids": ["r1", "r2"]}


def test_following_a_job_that_never_completes_exits_4(stub: StubServer, env_file: Path) -> None:
    stub.on(
        "GET", "/v1/prune-jobs/job_1", Reply(200, {"prune_job_id": "job_1", "status": "running"})
    )
    assert run(env_file, "prune-job", "job_1", "--follow", "--timeout", "0.1") == 4


def test_docs_upload_sends_multipart_and_prints_ids(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "carriers.csv").write_text("id,name\nc1,Acme\n")
    (tmp_path / "notes.md").write_text("# Notes\n")
    stub.on("POST", "/v1/documents", Reply(202, {"document_id": "doc_1", "status": "pending"}))
    code = run(
        env_file,
        "docs",
        "upload",
        str(tmp_path / "carriers.csv"),
        str(tmp_path / "notes.md"),
        "--json",
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["document_id"] for o in out] == ["doc_1", "doc_1"]
    bodies = [r.body for r in stub.requests]
    assert b'filename="carriers.csv"' in bodies[0] and b"text/csv" in bodies[0]
    assert b"text/markdown" in bodies[1]


def test_upload_dir_skips_unsupported_types(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "drop"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.csv").write_text("id\n1\n")
    (folder / "sub" / "b.txt").write_text("hello\n")
    (folder / "c.png").write_bytes(b"\x89PNG")
    (folder / ".hidden.csv").write_text("id\n2\n")
    stub.on("POST", "/v1/documents", Reply(202, {"document_id": "doc_1", "status": "pending"}))
    assert run(env_file, "docs", "upload-dir", str(folder)) == 0
    assert len(stub.requests) == 2
    assert "skipping 1 file(s)" in capsys.readouterr().err


def test_a_missing_file_is_a_usage_error_and_nothing_is_sent(
    stub: StubServer, env_file: Path, tmp_path: Path
) -> None:
    assert run(env_file, "docs", "upload", str(tmp_path / "nope.csv")) == 2
    assert stub.requests == []


def test_records_import_derives_the_type_and_sends_rows(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "carriers.csv"
    source.write_text("id,name\nc1,Acme\nc2,Bolt\n")
    stub.on("POST", "/v1/records:import", Reply(202, {"import_id": "imp_1", "status": "pending"}))
    assert run(env_file, "records", "import", str(source)) == 0
    body = stub.requests[0].json()
    assert body["record_type"] == "carrier" and body["source"] == "carriers.csv"
    assert body["rows"] == [{"id": "c1", "name": "Acme"}, {"id": "c2", "name": "Bolt"}]
    assert capsys.readouterr().out.strip() == "imp_1"


def test_bad_arguments_exit_2() -> None:
    with pytest.raises(SystemExit) as caught:
        main(["prune", "--older-than-days", "3", "--record-id", "r1"])
    assert caught.value.code == 2


def test_an_unreachable_gateway_exits_1_with_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from engram_devstack import free_port

    env = tmp_path / "dead.env"
    env.write_text(f"ENGRAM_URL=http://127.0.0.1:{free_port()}\nENGRAM_API_KEY=egk_x\n")
    assert main(["agents", "list", "--env-file", str(env), "--http-timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert "is the gateway up?" in err and "egk_x" not in err


def test_knowledge_search_sends_kinds_and_prints_passages_with_their_citation(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hit = {
        "kind": "passage",
        "score": 0.71,
        "document_id": "doc_1",
        "version": "v1",
        "name": "terms.pdf",
        "heading_path": ["Returns policy", "Electronics"],
        "page": 2,
        "span": {"start": 10, "end": 38},
        "text": "Opened electronics: 14 days.",
    }
    stub.on("POST", "/v1/knowledge/search", Reply(200, {"results": [hit]}))
    assert run(env_file, "knowledge", "search", "returns", "--kinds", "passage") == 0
    assert capsys.readouterr().out.splitlines() == [
        "passage  0.710  terms.pdf  Returns policy > Electronics  p.2  [10:38]",
        "  Opened electronics: 14 days.",
    ]
    sent = stub.seen("POST", "/v1/knowledge/search")[0].json()
    assert sent == {"query": "returns", "top_k": 5, "kinds": ["passage"]}


def test_an_unknown_kind_is_a_usage_error_before_anything_is_sent(
    stub: StubServer, env_file: Path
) -> None:
    with pytest.raises(SystemExit) as refused:
        run(env_file, "knowledge", "search", "returns", "--kinds", "memo")
    assert refused.value.code == 2
    assert stub.seen("POST", "/v1/knowledge/search") == []


def test_docs_passages_lists_a_documents_passages_in_order(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passage = {"passage_id": "psg_1", "ordinal": 0, "start": 0, "end": 6, "text": "Terms."}
    page = {"document_id": "doc_1", "version": "v1", "name": "t.md", "passages": [passage]}
    stub.on("GET", "/v1/documents/doc_1/passages", Reply(200, {**page, "next_after": 0}))
    assert run(env_file, "docs", "passages", "doc_1", "--limit", "1") == 0
    assert capsys.readouterr().out.splitlines() == [
        "doc_1  version=v1  t.md",
        "0  -  p.-  [0:6]",
        "  Terms.",
        "more: --after 0",
    ]
    assert stub.seen("GET", "/v1/documents/doc_1/passages")[0].query == {"limit": ["1"]}


def test_knowledge_assert_and_withdraw_send_the_value_as_json_when_it_parses(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = "/v1/knowledge/entities/carrier:c1/facts/fleet"
    queued = {
        "status": "accepted",
        "entity_id": "carrier:c1",
        "attribute": "fleet",
        "action": "assert",
        "key_id": "0123456789abcdef",
        "reason": "audit",
        "at": "2026-12-05T14:00:00Z",
        "entity_url": "/v1/knowledge/entities/carrier:c1",
    }
    stub.on("PUT", path, Reply(202, {**queued, "value": 12}))
    stub.on("DELETE", path, Reply(202, {**queued, "action": "withdraw", "value": None}))
    assert (
        run(env_file, "knowledge", "assert", "carrier:c1", "fleet", "12", "--reason", "audit") == 0
    )
    assert run(env_file, "knowledge", "withdraw", "carrier:c1", "fleet", "--reason", "audit") == 0
    assert capsys.readouterr().out.splitlines() == [
        "accepted  assert  carrier:c1  fleet = 12",
        "accepted  withdraw  carrier:c1  fleet = (every value)",
    ]
    assert stub.seen("PUT", path)[0].json() == {"value": 12, "reason": "audit"}
    assert stub.seen("DELETE", path)[0].json() == {"reason": "audit"}


def _job(state: str, done: int, error: str | None = None) -> Reply:
    return Reply(
        200,
        {
            "state": state,
            "done": done,
            "total": 10,
            "rate": 5.0,
            "seconds": 2.0,
            "target_collection": "memories-abc",
            "embedder": "bge-small",
            "error": error,
        },
    )


@pytest.mark.parametrize(("last", "code"), [("done", 0), ("failed", 5)])
def test_reindex_wait_prints_progress_until_it_ends(
    stub: StubServer,
    env_file: Path,
    capsys: pytest.CaptureFixture[str],
    last: str,
    code: int,
) -> None:
    stub.on("POST", "/v1/ops/reindex", _job("running", 0))
    stub.on("GET", "/v1/ops/reindex", _job("running", 4), _job(last, 10, "counts differ"))
    argv = ("reindex", "--embedder", "bge-small", "--wait", "--interval", "0")
    assert run(env_file, *argv) == code
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["running", "0/10"],
        ["running", "4/10"],
        [last, "10/10"],
    ]
    assert stub.seen("POST", "/v1/ops/reindex")[0].json() == {"embedder": "bge-small"}


RELATION = {
    "relation_id": "shipment:sh1:carrier_id:abc",
    "subject_id": "shipment:sh1",
    "predicate": "carried_by",
    "object_id": "carrier:c1",
    "direction": "in",
    "depth": 1,
    "from": "carrier:c1",
    "to": "shipment:sh1",
    "resolved": True,
    "status": "active",
}


def test_knowledge_relations_prints_each_hop_and_the_next_cursor(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = {"entity_id": "carrier:c1", "relations": [RELATION], "next_cursor": "abc"}
    stub.on("GET", "/v1/knowledge/entities/carrier:c1/relations", Reply(200, page))
    assert run(env_file, "knowledge", "relations", "carrier:c1", "--depth", "2") == 0
    assert capsys.readouterr().out.splitlines() == [
        "1  carrier:c1  <-carried_by-  shipment:sh1  active",
        "more: --cursor abc",
    ]
    [sent] = stub.seen("GET", "/v1/knowledge/entities/carrier:c1/relations")
    assert sent.query["depth"] == ["2"]


def test_knowledge_path_prints_each_path_or_no_path(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found: dict[str, object] = {"from": "carrier:c1", "to": "shipment:sh1", "length": 1}
    found["paths"] = [{"length": 1, "edges": [RELATION]}]
    stub.on("POST", "/v1/knowledge/paths", Reply(200, found))
    assert run(env_file, "knowledge", "path", "carrier:c1", "shipment:sh1") == 0
    assert capsys.readouterr().out.splitlines() == [
        "path 1 (1 hops)",
        "  carrier:c1  <-carried_by-  shipment:sh1  active",
    ]
    assert stub.seen("POST", "/v1/knowledge/paths")[0].json() == {
        "from": "carrier:c1",
        "to": "shipment:sh1",
    }
