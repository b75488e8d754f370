"""The client and `engram audit` read the tenant's audit log page by page."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engram_client import NO_RETRY, AsyncEngramClient, EngramClient
from engram_client.cli import audit
from engram_client.cli.main import main
from engram_platform.audit import ACTIONS
from tests.unit.client.stub import Reply, StubServer

pytestmark = pytest.mark.unit


def entry(n: int, action: str = "key.created") -> dict[str, object]:
    return {
        "entry_id": f"aud_{n}",
        "at": f"2026-12-05T12:00:0{n}+00:00",
        "actor": {"kind": "key", "key_id": "k1", "role": "admin"},
        "action": action,
        "target": {"key_id": f"k{n}"},
        "counts": {},
        "reason_sha256": None,
    }


def test_the_client_follows_the_cursor_and_sends_the_filters(stub: StubServer) -> None:
    stub.on(
        "GET",
        "/v1/audit",
        Reply(200, {"entries": [entry(3), entry(2)], "next_cursor": "c1"}),
        Reply(200, {"entries": [entry(1)], "next_cursor": None}),
    )
    since = datetime(2026, 12, 5, tzinfo=UTC)
    with EngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        found = list(client.iter_audit(action="key.created", since=since, page_size=2))
    assert [e.entry_id for e in found] == ["aud_3", "aud_2", "aud_1"]
    first, second = stub.seen("GET", "/v1/audit")
    assert first.query == {
        "action": ["key.created"],
        "since": ["2026-12-05T00:00:00+00:00"],
        "limit": ["2"],
    }
    assert second.query["cursor"] == ["c1"]


async def test_the_async_client_reads_a_page(stub: StubServer) -> None:
    stub.on("GET", "/v1/audit", Reply(200, {"entries": [entry(1)], "next_cursor": None}))
    async with AsyncEngramClient(stub.url, "egk_test", retry=NO_RETRY) as client:
        page = await client.list_audit(target="k1")
        walked = [e async for e in client.iter_audit()]
    assert page.entries[0].actor.key_id == "k1" and len(walked) == 1


def test_engram_audit_prints_entries_newest_first(
    stub: StubServer, env_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.on("GET", "/v1/audit", Reply(200, {"entries": [entry(2), entry(1)], "next_cursor": None}))
    assert main(["audit", "--limit", "5", "--env-file", str(env_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("  ")[:3] == ["2026-12-05T12:00:02+00:00", "key.created", "k1(admin)"]
    assert main(["audit", "--json", "--env-file", str(env_file)]) == 0
    assert json.loads(capsys.readouterr().out)[1]["entry_id"] == "aud_1"


def test_engram_audit_refuses_a_time_without_a_zone(env_file: Path) -> None:
    with pytest.raises(SystemExit):
        main(["audit", "--since", "2026-12-05T10:00:00", "--env-file", str(env_file)])


def test_the_cli_offers_every_action_the_platform_audits() -> None:
    assert audit.ACTIONS == ACTIONS
