"""The `engram` CLI as scripts run it: a subprocess, stdout for results, exit codes to branch on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.client.conftest import Stack, engram

COMMANDS = [
    [],
    ["tenant", "create"],
    ["docs", "upload"],
    ["docs", "upload-dir"],
    ["docs", "status"],
    ["docs", "delete"],
    ["records", "import"],
    ["records", "list"],
    ["memory", "store"],
    ["memory", "recall"],
    ["prune"],
    ["prune-job"],
    ["dlq", "list"],
    ["dlq", "replay"],
    ["agents", "create"],
    ["export"],
    ["import"],
    ["lineage"],
    ["health"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "engram")
def test_every_command_has_help_with_the_exit_codes(command: list[str]) -> None:
    done = engram(*command, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: engram" in done.stdout
    assert "4  timed out waiting" in done.stdout


def test_usage_errors_exit_2() -> None:
    assert engram("prune").returncode == 2
    assert engram("nonsense").returncode == 2
    assert engram("docs", "upload", "/nonexistent/file.csv").returncode == 2


def test_tenant_docs_and_prune_through_the_cli(pipeline: Stack, tmp_path: Path) -> None:
    created = engram("tenant", "create", "cli-tenant", env=pipeline.gateway.env)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert len(created.stdout.splitlines()) == 1 and key.startswith("egk_")

    run_env = tmp_path / ".engram" / "run.env"
    run_env.parent.mkdir()
    run_env.write_text(f"ENGRAM_URL={pipeline.gateway.url}\nENGRAM_API_KEY={key}\n")
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "carriers.csv").write_text("id,name\nc1,Acme Freight\n")
    (folder / "depots.csv").write_text("id,city\nd1,Lyon\n")
    (folder / "logo.png").write_bytes(b"\x89PNG")

    uploaded = engram("docs", "upload-dir", str(folder), "--wait", "--json", cwd=tmp_path)
    assert uploaded.returncode == 0, uploaded.stderr
    results = json.loads(uploaded.stdout)
    assert [Path(r["path"]).name for r in results] == ["carriers.csv", "depots.csv"]
    assert {r["status"] for r in results} == {"extracted"}
    assert "skipping 1 file(s)" in uploaded.stderr

    single = engram("docs", "upload", str(folder / "carriers.csv"), cwd=tmp_path)
    assert single.returncode == 0, single.stderr
    document_id = single.stdout.split()[0]
    assert document_id == results[0]["document_id"]

    status = engram("docs", "status", document_id, "--json", cwd=tmp_path)
    assert status.returncode == 0 and json.loads(status.stdout)["status"] == "extracted"

    missing = engram("docs", "status", "doc_000000000000000000000000", cwd=tmp_path)
    assert missing.returncode == 3
    assert missing.stderr.count("\n") == 1 and missing.stderr.startswith("engram: error: 404")

    rows = tmp_path / "lanes.json"
    rows.write_text(json.dumps([{"id": "l1", "origin": "Paris"}]))
    imported = engram("records", "import", str(rows), "--type", "lane", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip().startswith("imp_")

    started = engram("prune", "--record-id", "rec_does_not_exist", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    job_id = started.stdout.strip()
    shown = engram("prune-job", job_id, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    job = json.loads(shown.stdout)
    assert job["prune_job_id"] == job_id and job["selector"]["record_ids"] == ["rec_does_not_exist"]


def test_api_errors_and_timeouts_have_their_exit_codes(lone_gateway: Stack) -> None:
    env = {"ENGRAM_URL": lone_gateway.gateway.url, "ENGRAM_API_KEY": lone_gateway.key}
    bad_key = engram("agents", "list", env={**env, "ENGRAM_API_KEY": "egk_nope"})
    assert bad_key.returncode == 1
    assert "401 unauthorized" in bad_key.stderr and "egk_nope" not in bad_key.stderr

    invalid = engram("agents", "create", "--name", "x" * 500, env=env)
    assert invalid.returncode == 1 and "422 validation-error" in invalid.stderr

    started = engram("prune", "--older-than-days", "30", env=env)
    assert started.returncode == 0, started.stderr
    job_id = started.stdout.strip()
    waited = engram("prune-job", job_id, "--follow", "--timeout", "2", env=env)
    assert waited.returncode == 4, "nothing acknowledges, so following it times out"
    assert "raise --timeout" in waited.stderr

    unreachable = engram("health", env={**env, "ENGRAM_URL": "http://127.0.0.1:9"})
    assert unreachable.returncode == 1 and "is the gateway up?" in unreachable.stderr
