"""Memory edits on the real broker and database (gateway, memory and embedding processes): an
edited memory recalls with its new content and its history lists both versions with key, time
and reason; of two concurrent edits one wins and one is a 409 naming the winner; an edit of a
superseded version is a 409 naming its newer one; another tenant's or a missing memory is 404."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from engram_client import Conflict, EngramClient
from tests.integration.client.conftest import Stack
from tests.support.polling import until
from tests.support.tenants import create_tenant

pytestmark = pytest.mark.shared_stack


def _client(stack: Stack, key: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key or stack.key}"}
    return httpx.Client(base_url=stack.gateway.url, headers=headers, timeout=30)


def _status(client: httpx.Client, agent: str, memory_id: str) -> str:
    response = client.get(f"/v1/agents/{agent}/memories/{memory_id}")
    assert response.status_code == 200, response.text
    return str(response.json()["status"])


def _settled(client: httpx.Client, agent: str, memory_id: str, status: str) -> None:
    until(lambda: _status(client, agent, memory_id) == status, f"{memory_id} {status}", 60)


def _recalled(client: httpx.Client, agent: str, query: str) -> list[dict[str, Any]]:
    response = client.post(f"/v1/agents/{agent}/recall", json={"query": query, "top_k": 10})
    assert response.status_code == 200, response.text
    return list(response.json()["results"])


def test_an_edit_supersedes_the_old_version_and_its_history_names_key_time_and_reason(
    memory_stack: Stack,
) -> None:
    key_id = memory_stack.key.split("_")[1]
    with _client(memory_stack) as client:
        agent = client.post("/v1/agents", json={"name": "support"}).json()["agent_id"]
        written = client.post(
            f"/v1/agents/{agent}/memories",
            json={"content": "Acme ships on Mondays", "type": "fact", "metadata": {"t": "a"}},
        )
        assert written.status_code == 202, written.text
        old = written.json()["memory_id"]
        _settled(client, agent, old, "active")

        typo = client.patch(f"/v1/agents/{agent}/memories/{old}", json={"contnet": "x"})
        assert typo.status_code == 422 and "contnet" in typo.text
        empty = client.patch(f"/v1/agents/{agent}/memories/{old}", json={"reason": "why"})
        assert empty.status_code == 422
        edit = client.patch(
            f"/v1/agents/{agent}/memories/{old}",
            json={"content": "Acme ships on Tuesdays", "reason": "the carrier changed days"},
        )
        assert edit.status_code == 202, edit.text
        newer = edit.json()["memory_id"]
        assert newer != old and edit.json()["supersedes"] == old
        at_once = client.get(f"/v1/agents/{agent}/memories/{old}/history").json()["versions"]
        assert [v["memory_id"] for v in at_once] == [old, newer], "listed as soon as accepted"
        _settled(client, agent, newer, "active")
        _settled(client, agent, old, "superseded")

        hits = _recalled(client, agent, "Acme ships on Tuesdays")
        assert [h["memory_id"] for h in hits] == [newer], "only the live version recalls"
        assert hits[0]["content"] == "Acme ships on Tuesdays"
        assert old not in {
            h["memory_id"] for h in _recalled(client, agent, "Acme ships on Mondays")
        }
        stored = client.get(f"/v1/agents/{agent}/memories/{newer}").json()
        assert stored["type"] == "fact" and stored["metadata"] == {"t": "a"}, "kept when not given"

        for start in (old, newer):
            history = client.get(f"/v1/agents/{agent}/memories/{start}/history")
            assert history.status_code == 200, history.text
            versions = history.json()["versions"]
            assert [v["memory_id"] for v in versions] == [old, newer]
            assert [v["status"] for v in versions] == ["superseded", "active"]
            assert [v["content"] for v in versions] == [
                "Acme ships on Mondays",
                "Acme ships on Tuesdays",
            ]
            assert all(v["author"]["key_id"] == key_id for v in versions)
            assert all(v["author"]["role"] == "admin" for v in versions)
            assert [v["edit_reason"] for v in versions] == [None, "the carrier changed days"]
            assert versions[0]["created_at"] < versions[1]["created_at"]
            assert memory_stack.key not in history.text, "the key's id, never its secret"

        stale = client.patch(f"/v1/agents/{agent}/memories/{old}", json={"content": "again"})
        assert stale.status_code == 409, stale.text
        assert stale.headers["content-type"].startswith("application/problem+json")
        assert stale.json()["superseded_by"] == newer

        retag = client.patch(f"/v1/agents/{agent}/memories/{newer}", json={"metadata": {"t": "b"}})
        assert retag.status_code == 202, "a metadata-only edit restates the content: no duplicate"
        third = retag.json()["memory_id"]
        _settled(client, agent, third, "active")
        third_row = client.get(f"/v1/agents/{agent}/memories/{third}").json()
        assert third_row["content"] == "Acme ships on Tuesdays" and third_row["metadata"] == {
            "t": "b"
        }
        chain = client.get(f"/v1/agents/{agent}/memories/{old}/history").json()["versions"]
        assert [v["memory_id"] for v in chain] == [old, newer, third]

        missing = client.patch(f"/v1/agents/{agent}/memories/mem_missing", json={"content": "x"})
        assert missing.status_code == 404
        assert client.get(f"/v1/agents/{agent}/memories/mem_missing/history").status_code == 404

    other = create_tenant(memory_stack.gateway.env, "other")
    with _client(memory_stack, other) as foreign:
        theirs = foreign.post("/v1/agents", json={"name": "x"}).json()["agent_id"]
        for path in (
            f"/v1/agents/{agent}/memories/{third}",
            f"/v1/agents/{theirs}/memories/{third}",
        ):
            assert foreign.patch(path, json={"content": "mine now"}).status_code == 404
            assert foreign.get(f"{path}/history").status_code == 404


async def test_two_concurrent_edits_of_one_version_leave_one_winner_and_one_409(
    memory_stack: Stack,
) -> None:
    with _client(memory_stack) as client:
        agent = client.post("/v1/agents", json={"name": "race"}).json()["agent_id"]
        old = client.post(
            f"/v1/agents/{agent}/memories", json={"content": "Beta Lines ships on Fridays"}
        ).json()["memory_id"]
        _settled(client, agent, old, "active")

    headers = {"Authorization": f"Bearer {memory_stack.key}"}
    async with httpx.AsyncClient(
        base_url=memory_stack.gateway.url, headers=headers, timeout=30
    ) as racing:
        answers = await asyncio.gather(
            *(
                racing.patch(
                    f"/v1/agents/{agent}/memories/{old}",
                    json={"content": f"Beta Lines ships on day {n}", "reason": f"edit {n}"},
                )
                for n in range(2)
            )
        )
    by_status = sorted(answers, key=lambda r: r.status_code)
    assert [r.status_code for r in by_status] == [202, 409], [r.text for r in answers]
    winner = by_status[0].json()["memory_id"]
    assert by_status[1].json()["superseded_by"] == winner
    with _client(memory_stack) as client:
        _settled(client, agent, winner, "active")
        versions = client.get(f"/v1/agents/{agent}/memories/{old}/history").json()["versions"]
        assert [v["memory_id"] for v in versions] == [old, winner]
        listed = client.get(f"/v1/agents/{agent}/memories", params={"status": "active"}).json()
        assert [m["memory_id"] for m in listed["memories"]] == [winner]

    with EngramClient(memory_stack.gateway.url, memory_stack.key) as typed:
        with pytest.raises(Conflict) as stale:
            typed.update_memory(agent, old, content="Beta Lines ships late")
        assert stale.value.superseded_by == winner
        history = typed.memory_history(agent, winner)
        assert [v.memory_id for v in history.versions] == [old, winner]
        assert history.versions[1].edit_reason in {"edit 0", "edit 1"}
        assert history.versions[1].author is not None
