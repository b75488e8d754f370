"""`engram memory ...` against the stub gateway: what each command sends and prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram_client.cli.main import main
from tests.unit.client.stub import Reply, StubServer

pytestmark = pytest.mark.unit

MEMORIES = "/v1/agents/agt_1/memories"
RECALL = "/v1/agents/agt_1/recall"


def run(env_file: Path, *argv: str) -> int:
    return int(main([*argv, "--env-file", str(env_file)]))


def _hit(memory_id: str, dense: float, lexical: float | None, fused: float) -> dict[str, Any]:
    return {
        "memory_id": memory_id,
        "content": f"about {memory_id}",
        "score": dense,
        "scores": {"dense": dense, "lexical": lexical, "fused": fused},
    }


def test_store_sends_scope_and_prints_only_the_id(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("POST", MEMORIES, Reply(202, {"memory_id": "mem_1", "status": "pending"}))
    code = run(
        env_file,
        "memory",
        "store",
        "agt_1",
        "prefers email",
        "--user",
        "u1",
        "--session",
        "s1",
        "--allow-duplicate",
    )
    assert code == 0
    captured = capsys.readouterr()
    assert captured.out == "mem_1\n" and captured.err == ""
    body = stub.requests[0].json()
    assert (body["user_id"], body["session_id"], body["allow_duplicate"]) == ("u1", "s1", True)


def test_store_sends_a_ttl_or_an_expiry_time(stub: StubServer, env_file: Path) -> None:
    stub.on("POST", MEMORIES, Reply(202, {"memory_id": "mem_1", "status": "pending"}))
    assert run(env_file, "memory", "store", "agt_1", "locker 4417", "--ttl", "30") == 0
    at = "2027-01-31T18:00:00Z"
    assert run(env_file, "memory", "store", "agt_1", "locker 4418", "--expires-at", at) == 0
    sent = [r.json() for r in stub.requests]
    assert sent[0]["ttl_seconds"] == 30 and "expires_at" not in sent[0]
    assert sent[1]["expires_at"] == "2027-01-31T18:00:00+00:00"


@pytest.mark.parametrize("when", ["tomorrow", "2027-01-31T18:00:00"])
def test_an_expiry_time_without_a_timezone_or_unreadable_is_a_usage_error(
    stub: StubServer, env_file: Path, when: str
) -> None:
    assert run(env_file, "memory", "store", "agt_1", "x", "--expires-at", when) == 2
    assert stub.requests == []


def test_ttl_and_expires_at_together_are_refused_by_the_parser(env_file: Path) -> None:
    with pytest.raises(SystemExit):
        run(env_file, "memory", "store", "agt_1", "x", "--ttl", "5", "--expires-at", "2027-01-01Z")


def test_retention_shows_and_sets_the_agents_rules(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = "/v1/agents/agt_1/retention"
    rule = {"type": "scratch", "max_count": 2, "max_age_seconds": None}
    answer = {"agent_id": "agt_1", "rules": [rule], "defaults": []}
    stub.on("GET", path, Reply(200, answer))
    stub.on("PUT", path, Reply(200, answer))
    assert run(env_file, "memory", "retention", "agt_1") == 0
    rules = '[{"type": "scratch", "max_count": 2}]'
    assert run(env_file, "memory", "retention", "agt_1", "--set", rules) == 0
    assert [r.method for r in stub.requests] == ["GET", "PUT"]
    assert stub.requests[1].json() == {"rules": [{"type": "scratch", "max_count": 2}]}
    assert '"max_count": 2' in capsys.readouterr().out


@pytest.mark.parametrize("rules", ["{", '{"type": "x"}', "[1]"])
def test_retention_rules_that_are_no_json_list_of_objects_are_a_usage_error(
    stub: StubServer, env_file: Path, rules: str
) -> None:
    assert run(env_file, "memory", "retention", "agt_1", "--set", rules) == 2
    assert stub.requests == []


def test_store_says_on_stderr_that_it_was_deduplicated(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = {"memory_id": "mem_old", "status": "active", "deduplicated": True}
    stub.on("POST", MEMORIES, Reply(200, existing))
    assert run(env_file, "memory", "store", "agt_1", "Prefers email") == 0
    captured = capsys.readouterr()
    assert captured.out == "mem_old\n"
    assert "deduplicated: mem_old (active) already holds this content" in captured.err
    assert "allow_duplicate" not in stub.requests[0].json()


def test_store_json_shows_the_deduplicated_flag(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("POST", MEMORIES, Reply(200, {"memory_id": "mem_old", "deduplicated": True}))
    assert run(env_file, "memory", "store", "agt_1", "x", "--json") == 0
    assert json.loads(capsys.readouterr().out)["deduplicated"] is True


def test_recall_sends_mode_scope_filter_and_recency(stub: StubServer, env_file: Path) -> None:
    stub.on("POST", RECALL, Reply(200, {"results": [], "mode": "lexical"}))
    code = run(
        env_file,
        "memory",
        "recall",
        "agt_1",
        "contact",
        "--mode",
        "lexical",
        "--user",
        "u1",
        "--filter",
        '{"metadata": {"priority": {"gte": 2}}, "session_id": "s1"}',
        "--recency-half-life",
        "14",
    )
    assert code == 0
    assert stub.requests[0].json() == {
        "query": "contact",
        "top_k": 5,
        "mode": "lexical",
        "filter": {"metadata": {"priority": {"gte": 2}}, "session_id": "s1", "user_id": "u1"},
        "recency_half_life_days": 14.0,
    }


def test_recall_prints_fused_dense_and_lexical_scores_under_a_header(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = {
        "results": [_hit("mem_1", 0.91, 0.4, 0.0328), _hit("mem_2", -0.05, None, 0.0161)],
        "mode": "hybrid",
        "floor": 0.5,
        "dropped_below_floor": 2,
    }
    stub.on("POST", RECALL, Reply(200, answer))
    assert run(env_file, "memory", "recall", "agt_1", "contact", "--min-score", "-0.1") == 0
    assert capsys.readouterr().out.splitlines() == [
        "  FUSED    DENSE  LEXICAL  MEMORY_ID  CONTENT",
        " 0.0328   0.9100   0.4000  mem_1  about mem_1",
        " 0.0161  -0.0500        -  mem_2  about mem_2",
        "(2 hit(s), hybrid; 2 below the floor)",
    ]


def test_recall_without_hits_prints_only_the_summary(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = {"results": [], "mode": "dense", "dropped_below_floor": 3}
    stub.on("POST", RECALL, Reply(200, answer))
    assert run(env_file, "memory", "recall", "agt_1", "contact") == 0
    assert capsys.readouterr().out == "(0 hit(s), dense; 3 below the floor)\n"


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--filter", "{not json"], "--filter is not JSON"),
        (["--filter", "[1]"], "--filter must be a JSON object"),
        (["--user", "u2", "--filter", '{"user_id": "u1"}'], "--user 'u2' contradicts"),
    ],
)
def test_a_bad_filter_is_a_usage_error_and_nothing_is_sent(
    stub: StubServer,
    env_file: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    says: str,
) -> None:
    assert run(env_file, "memory", "recall", "agt_1", "q", *flags) == 2
    assert says in capsys.readouterr().err
    assert stub.requests == []


def test_an_unknown_mode_is_refused_by_the_parser() -> None:
    with pytest.raises(SystemExit) as caught:
        main(["memory", "recall", "agt_1", "q", "--mode", "fuzzy"])
    assert caught.value.code == 2


def test_a_write_rejected_as_a_duplicate_when_stored_exits_1_and_names_the_original(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("POST", MEMORIES, Reply(202, {"memory_id": "mem_2", "status": "pending"}))
    rejected = {
        "memory_id": "mem_2",
        "status": "rejected",
        "reason": "duplicate",
        "duplicate_of": "mem_1",
    }
    stub.on("GET", f"{MEMORIES}/mem_2", Reply(200, rejected))
    assert run(env_file, "memory", "store", "agt_1", "x", "--wait", "--timeout", "5") == 1
    assert capsys.readouterr().out == "mem_2  rejected  duplicate of mem_1\n"


def _memory(n: int, agent: str = "agt_1") -> dict[str, Any]:
    return {
        "memory_id": f"mem_{n}",
        "agent_id": agent,
        "status": "active",
        "type": "fact",
        "content": f"fact\n number {n}",
    }


def test_list_prints_one_page_and_gives_the_next_cursor_on_stderr(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = {"memories": [_memory(1), _memory(2)], "next_cursor": "cur-2"}
    stub.on("GET", MEMORIES, Reply(200, page))
    code = run(
        env_file,
        "memory",
        "list",
        "agt_1",
        "--type",
        "fact",
        "--status",
        "active",
        "--session",
        "s1",
        "--order",
        "recent",
        "--limit",
        "2",
    )
    assert code == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "mem_1  active  fact  fact number 1",
        "mem_2  active  fact  fact number 2",
    ]
    assert "--cursor cur-2" in captured.err
    assert stub.requests[0].query == {
        "type": ["fact"],
        "status": ["active"],
        "filter": ['{"session_id":"s1"}'],
        "limit": ["2"],
        "order": ["recent"],
    }


def test_list_all_follows_every_cursor_and_json_has_no_next_cursor(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on(
        "GET",
        MEMORIES,
        Reply(200, {"memories": [_memory(1)], "next_cursor": "cur-1"}),
        Reply(200, {"memories": [_memory(2)], "next_cursor": None}),
    )
    assert run(env_file, "memory", "list", "agt_1", "--all", "--limit", "1", "--json") == 0
    captured = capsys.readouterr()
    listed = json.loads(captured.out)
    assert [m["memory_id"] for m in listed["memories"]] == ["mem_1", "mem_2"]
    assert listed["next_cursor"] is None and captured.err == ""
    assert [r.query.get("cursor") for r in stub.requests] == [None, ["cur-1"]]


def test_list_without_an_agent_spans_agents_and_names_each(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = {"memories": [_memory(1, "agt_1"), _memory(2, "agt_2")], "next_cursor": None}
    stub.on("GET", "/v1/memories", Reply(200, page))
    assert run(env_file, "memory", "list", "--cursor", "cur-0", "--search", "number") == 0
    assert capsys.readouterr().out.splitlines() == [
        "agt_1  mem_1  active  fact  fact number 1",
        "agt_2  mem_2  active  fact  fact number 2",
    ]
    assert stub.requests[0].query == {"search": ["number"], "cursor": ["cur-0"]}


def test_list_refuses_a_cursor_together_with_all() -> None:
    with pytest.raises(SystemExit) as caught:
        main(["memory", "list", "agt_1", "--all", "--cursor", "c"])
    assert caught.value.code == 2


def test_count_prints_the_total_first_then_by_status_and_type(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tally = {"count": 3, "by_status": {"pending": 1, "active": 2}, "by_type": {"fact": 3}}
    stub.on("GET", f"{MEMORIES}:count", Reply(200, tally))
    assert run(env_file, "memory", "count", "agt_1", "--user", "u1") == 0
    assert capsys.readouterr().out.splitlines() == [
        "3",
        "by status: active=2 pending=1",
        "by type: fact=3",
    ]
    assert stub.requests[0].query == {"filter": ['{"user_id":"u1"}']}


def test_clear_needs_yes_and_sends_nothing_without_it(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(env_file, "memory", "clear", "agt_1", "--user", "u1") == 2
    assert "agt_1's memories of user u1 for good; add --yes" in capsys.readouterr().err
    assert run(env_file, "memory", "clear", "agt_1") == 2
    assert "every memory of agt_1" in capsys.readouterr().err
    assert stub.requests == []


def test_clear_withdraws_one_scope_and_prints_how_many(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("DELETE", MEMORIES, Reply(200, {"agent_id": "agt_1", "withdrawn": 4}))
    code = run(env_file, "memory", "clear", "agt_1", "--user", "u1", "--session", "s1", "--yes")
    assert code == 0
    assert capsys.readouterr().out == "4 withdrawn\n"
    assert stub.requests[0].query == {"user_id": ["u1"], "session_id": ["s1"]}


@pytest.mark.parametrize(
    "action", ["store", "get", "recall", "list", "count", "clear", "retention"]
)
def test_every_memory_command_has_help(action: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["memory", action, "--help"])
    assert caught.value.code == 0
    assert f"usage: engram memory {action}" in capsys.readouterr().out


CONVERSATIONS = "/v1/agents/agt_1/conversations"


def test_converse_sends_the_file_and_waits_for_what_became_of_each_message(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = tmp_path / "chat.json"
    messages = [{"role": "user", "content": "I live in Riga"}, {"role": "system", "content": "x"}]
    chat.write_text(json.dumps({"messages": messages, "session_id": "s9"}))
    stub.on("POST", CONVERSATIONS, Reply(202, {"conversation_id": "conv_1", "status": "pending"}))
    processing = {"conversation_id": "conv_1", "status": "processing", "settled": False}
    done = {
        "conversation_id": "conv_1",
        "status": "processed",
        "settled": True,
        "messages": [
            {
                "index": 0,
                "role": "user",
                "outcome": "memory",
                "memory_id": "mem_1",
                "memory_status": "active",
            },
            {"index": 1, "role": "system", "outcome": "kept"},
        ],
    }
    stub.on("GET", f"{CONVERSATIONS}/conv_1", Reply(200, processing), Reply(200, done))
    code = run(env_file, "memory", "converse", "agt_1", str(chat), "--user", "u1", "--wait")
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "conv_1  processed",
        "message 0  user  mem_1  active",
        "message 1  system  kept",
    ]
    body = stub.requests[0].json()
    assert body["messages"] == messages and (body["user_id"], body["session_id"]) == ("u1", "s9")
    assert body["idempotency_key"], "a key is generated so a retry names the same conversation"


def test_converse_refuses_a_file_that_is_not_a_conversation(
    stub: StubServer, env_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": []}')
    assert run(env_file, "memory", "converse", "agt_1", str(bad)) != 0
    assert "list of messages" in capsys.readouterr().err
    assert not stub.requests


def test_edit_sends_the_change_and_a_stale_version_names_the_newer(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = f"{MEMORIES}/mem_old"
    stub.on("PATCH", path, Reply(202, {"memory_id": "mem_new", "supersedes": "mem_old"}))
    code = run(env_file, "memory", "edit", "agt_1", "mem_old", "ships Tuesdays", "--reason", "fix")
    assert code == 0 and capsys.readouterr().out.strip() == "mem_new"
    assert stub.requests[0].json() == {"content": "ships Tuesdays", "reason": "fix"}
    stub.on("PATCH", path, Reply(409, {"type": "/problems/edit-conflict", "superseded_by": "m2"}))
    assert run(env_file, "memory", "edit", "agt_1", "mem_old", "--metadata", "{}") != 0
    assert "edit m2" in capsys.readouterr().err
    assert stub.requests[1].json() == {"metadata": {}}


def test_edit_may_send_only_a_new_expiry_and_nothing_is_a_usage_error(
    stub: StubServer, env_file: Path
) -> None:
    path = f"{MEMORIES}/mem_old"
    stub.on("PATCH", path, Reply(202, {"memory_id": "mem_new", "supersedes": "mem_old"}))
    assert run(env_file, "memory", "edit", "agt_1", "mem_old", "--ttl", "60") == 0
    at = "2027-01-31T18:00:00Z"
    assert run(env_file, "memory", "edit", "agt_1", "mem_old", "--expires-at", at) == 0
    assert [r.json() for r in stub.requests] == [
        {"ttl_seconds": 60},
        {"expires_at": "2027-01-31T18:00:00+00:00"},
    ]
    assert run(env_file, "memory", "edit", "agt_1", "mem_old") == 2
    assert len(stub.requests) == 2


def test_history_prints_one_line_per_version(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    versions = [
        {"memory_id": "mem_old", "status": "superseded", "created_at": "2026-01-01T00:00:00Z"},
        {
            "memory_id": "mem_new",
            "status": "active",
            "created_at": "2026-01-02T00:00:00Z",
            "author": {"key_id": "key_7", "role": "admin"},
            "edit_reason": "carrier changed\ndays",
        },
    ]
    body = {"memory_id": "mem_old", "versions": versions}
    stub.on("GET", f"{MEMORIES}/mem_old/history", Reply(200, body))
    assert run(env_file, "memory", "history", "agt_1", "mem_old") == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("mem_old  superseded  2026-01-01")
    assert lines[1].endswith("key_7/admin  carrier changed days")
