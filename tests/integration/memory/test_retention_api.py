"""An agent's retention rules through the API: set, read back, applied by the memory service
over one population (the agent's live memories of the type), over the deployment's default."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write


def test_an_agents_own_rule_is_read_back_and_evicts_over_its_population(
    start_stack: Callable[..., MemoryStack],
) -> None:
    defaults = [{"type": "scratch", "max_count": 4}, {"type": "note", "max_age_seconds": 3600}]
    stack = start_stack(ENGRAM_MEMORY_RETENTION=json.dumps(defaults))
    with stack.client(stack.tenant()) as client:
        agent, other = new_agent(client), new_agent(client)
        path = f"/v1/agents/{agent}/retention"
        before = client.get(path)
        assert before.status_code == 200, before.text
        assert before.json() == {
            "agent_id": agent,
            "rules": [],
            "defaults": [
                {"type": "scratch", "max_count": 4, "max_age_seconds": None},
                {"type": "note", "max_count": None, "max_age_seconds": 3600},
            ],
        }
        put = client.put(path, json={"rules": [{"type": "scratch", "max_count": 2}]})
        assert put.status_code == 200, put.text
        assert put.json()["rules"] == [{"type": "scratch", "max_count": 2, "max_age_seconds": None}]
        assert put.json()["defaults"] == [
            {"type": "note", "max_count": None, "max_age_seconds": 3600}
        ]
        assert client.get(path).json() == put.json()

        scratch = []
        for n in range(4):
            scratch.append(write(client, agent, f"scratch line {n}", type="scratch"))
            wait_status(client, agent, scratch[-1], {"active"})
        theirs = []
        for n in range(5):
            theirs.append(write(client, other, f"their scratch line {n}", type="scratch"))
            wait_status(client, other, theirs[-1], {"active"})

        def listed(agent_id: str, status: str) -> list[str]:
            params = {"type": "scratch", "status": status}
            found = client.get(f"/v1/agents/{agent_id}/memories", params=params).json()
            return [m["memory_id"] for m in found["memories"]]

        assert listed(agent, "active") == scratch[2:]
        assert listed(agent, "withdrawn") == scratch[:2]
        assert listed(other, "active") == theirs[1:], "the other agent keeps the default (4)"
        assert listed(other, "withdrawn") == theirs[:1]
        evicted = client.get(f"/v1/agents/{agent}/memories/{scratch[0]}").json()
        assert evicted["withdrawn_reason"] == "retention"

        cleared = client.put(path, json={"rules": []})
        assert cleared.status_code == 200 and cleared.json()["rules"] == []


def test_bad_rules_are_422_naming_the_field_and_a_foreign_agent_is_404(
    stack: MemoryStack,
) -> None:
    with stack.client(stack.tenant("one")) as client:
        agent = new_agent(client)
        path = f"/v1/agents/{agent}/retention"
        bodies = [
            {"rules": [{"type": "scratch"}]},
            {"rules": [{"type": "scratch", "max_count": 0}]},
            {"rules": [{"type": "a", "max_count": 1}, {"type": "a", "max_count": 2}]},
            {"rules": [{"type": "scratch", "max_count": 1, "cap": 2}]},
            {"policies": []},
        ]
        answers = [client.put(path, json=body) for body in bodies]
        unchanged = client.get(path).json()
    with stack.client(stack.tenant("two")) as stranger:
        foreign = [stranger.get(path), stranger.put(path, json={"rules": []})]
    assert [a.status_code for a in answers] == [422] * len(bodies), [a.text for a in answers]
    assert "max_count and/or max_age_seconds" in answers[0].text
    assert "max_count" in answers[1].text
    assert "named more than once: a" in answers[2].text
    assert "cap" in answers[3].text
    assert "policies" in answers[4].text
    assert unchanged["rules"] == []
    assert [a.status_code for a in foreign] == [404, 404]
