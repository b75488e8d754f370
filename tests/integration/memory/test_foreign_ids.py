"""A write may supersede only a memory of its own agent and derive only from its own tenant's
items: another tenant's ids are refused at the door (404 / 422 naming the field), never
queued to dangle."""

from __future__ import annotations

from typing import Any

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write

PROBLEM = "application/problem+json"


def _refused(response: Any, status: int, loc: list[str]) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    assert [e["loc"] for e in response.json()["errors"]] == [loc]


def test_another_tenants_and_another_agents_ids_are_refused(stack: MemoryStack) -> None:
    key_a, key_b = stack.tenant("a"), stack.tenant("b")
    with stack.client(key_a) as a, stack.client(key_b) as b:
        a1 = new_agent(a)
        theirs = write(a, a1, "tenant a's note about the loading dock")
        b1, b2 = new_agent(b), new_agent(b)
        mine = write(b, b1, "tenant b's note about the night shift")
        for client, agent, memory in ((a, a1, theirs), (b, b1, mine)):
            wait_status(client, agent, memory, {"active"})

        memories = f"/v1/agents/{b1}/memories"
        _refused(
            b.post(memories, json={"content": "x takes over", "supersedes": theirs}),
            404,
            ["body", "supersedes"],
        )
        _refused(
            b.post(f"/v1/agents/{b2}/memories", json={"content": "y", "supersedes": mine}),
            404,
            ["body", "supersedes"],
        )
        _refused(
            b.post(memories, json={"content": "made from a", "derived_from": [mine, theirs]}),
            422,
            ["body", "derived_from", "1"],
        )
        batch = {"memories": [{"content": "fine"}, {"content": "no", "derived_from": [theirs]}]}
        _refused(
            b.post(f"{memories}:batch", json=batch),
            422,
            ["body", "memories", "1", "derived_from", "0"],
        )
        listed = b.get(memories).json()["memories"]
        assert [m["memory_id"] for m in listed] == [mine], "nothing of a refused request queued"

        newer = write(
            b, b1, "the night shift moved to B dock", supersedes=mine, derived_from=[mine]
        )
        wait_status(b, b1, newer, {"active"})
        assert wait_status(b, b1, mine, {"superseded"})["superseded_by"] == newer
        assert a.get(f"/v1/agents/{a1}/memories/{theirs}").json()["status"] == "active"
