"""Memories through the typed client and the CLI: write with a key and a scope, deduplicate,
wait, read, list and count, recall by mode and filter, withdraw all or one scope."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from engram_client import AsyncEngramClient, Call, EngramClient, NotFound, ValidationFailed, models
from tests.integration.client.conftest import Stack, engram

pytestmark = pytest.mark.shared_stack


def test_memory_lifecycle_through_the_client(memory_stack: Stack) -> None:
    with EngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = client.create_agent("support")
        first = client.write_memory(
            agent.agent_id,
            "The carrier Acme prefers email over phone",
            type="fact",
            metadata={"topic": "contact"},
            idempotency_key="note-1",
        )
        again = client.write_memory(
            agent.agent_id,
            "The carrier Acme prefers email over phone",
            type="fact",
            metadata={"topic": "contact"},
            idempotency_key="note-1",
        )
        assert again.memory_id == first.memory_id, "one key, one memory"
        second = client.write_memory(agent.agent_id, "Beta Lines ships on Fridays")

        statuses: list[str] = []
        stored = client.wait_for_memory(
            agent.agent_id, first.memory_id, 60, on_progress=lambda m: statuses.append(m.status)
        )
        assert stored.status == "active" and stored.type == "fact"
        assert client.wait_for_memory(agent.agent_id, second.memory_id, 60).status == "active"

        listed = client.list_memories(agent.agent_id, type="fact")
        assert [m.memory_id for m in listed.memories] == [first.memory_id]
        across = [m.memory_id for m in client.iter_memories(search="Fridays")]
        assert across == [second.memory_id]

        recalled = client.recall(agent.agent_id, "The carrier Acme prefers email over phone")
        assert recalled.results and recalled.results[0].memory_id == first.memory_id
        floored = client.recall(agent.agent_id, "Acme email", min_score=0.999)
        assert all(hit.score >= 0.999 for hit in floored.results)

        withdrawn = client.delete_memory(agent.agent_id, first.memory_id)
        assert withdrawn.status == "withdrawn"
        cleared = client.clear_memories(agent.agent_id)
        assert cleared.agent_id == agent.agent_id
        with pytest.raises(NotFound):
            client.get_memory(agent.agent_id, "mem_unknown")


async def test_async_memory_write_and_wait(memory_stack: Stack) -> None:
    async with AsyncEngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = await client.create_agent("async")
        accepted = await client.write_memory(agent.agent_id, "Depot Lyon opens at six")
        memory = await client.wait_for_memory(agent.agent_id, accepted.memory_id, 60)
    assert memory.status == "active"


def _stored(client: EngramClient, agent_id: str, content: str, **fields: Any) -> str:
    """Write one memory and wait until it is active, so the next write is newer."""
    accepted = client.write_memory(agent_id, content, **fields)
    assert not accepted.deduplicated, content
    memory = client.wait_for_memory(agent_id, accepted.memory_id, 60)
    assert memory.status == "active", memory
    return accepted.memory_id


def _ids(hits: models.Recall) -> set[str]:
    return {hit.memory_id for hit in hits.results}


def test_a_repeated_write_in_one_scope_answers_the_live_memory(memory_stack: Stack) -> None:
    with EngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = client.create_agent("dedup").agent_id
        first = _stored(client, agent, "Acme prefers email", user_id="u1", session_id="s1")
        assert client.get_memory(agent, first).user_id == "u1"

        again = client.write_memory(agent, "  acme PREFERS   email ", user_id="u1", session_id="s1")
        assert again.deduplicated and again.memory_id == first and again.status == "active"

        elsewhere = client.write_memory(agent, "Acme prefers email", user_id="u2")
        assert not elsewhere.deduplicated and elsewhere.memory_id != first

        batch = client.write_memories(
            agent,
            [
                {"content": "ACME prefers email", "user_id": "u1", "session_id": "s1"},
                {"content": "Acme ships on Fridays", "user_id": "u1", "session_id": "s1"},
            ],
        )
        assert [a.deduplicated for a in batch] == [True, False]
        assert batch[0].memory_id == first

        forced = client.write_memory(
            agent, "Acme prefers email", user_id="u1", session_id="s1", allow_duplicate=True
        )
        assert not forced.deduplicated and forced.memory_id != first
        assert client.wait_for_memory(agent, forced.memory_id, 60).status == "active"


def test_content_and_fields_the_gateway_refuses_are_422_at_once(memory_stack: Stack) -> None:
    with EngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = client.create_agent("refused").agent_id
        for content in ("", "   \n\t ", "x" * 70_000):
            with pytest.raises(ValidationFailed):
                client.write_memory(agent, content)
        with pytest.raises(ValidationFailed):
            client.write_memories(agent, [{"content": "fine", "colour": "red"}])
        unknown = Call(
            "GET",
            f"/v1/agents/{agent}/memories",
            models.MemoryPage.model_validate,
            params={"colour": "red"},
        )
        with pytest.raises(ValidationFailed):
            client.run(unknown)


def test_recall_modes_scores_and_filters(memory_stack: Stack) -> None:
    with EngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = client.create_agent("recall").agent_id
        lyon = _stored(
            client,
            agent,
            "Order 4711 ships from Lyon on Monday",
            user_id="u1",
            metadata={"priority": 3, "channel": "email", "seen": "2025-01-05T00:00:00Z"},
        )
        berlin = _stored(
            client,
            agent,
            "Order 4712 ships from Berlin on Friday",
            user_id="u2",
            metadata={"priority": 1, "channel": "phone", "seen": "2024-12-01T00:00:00Z"},
        )
        invoices = _stored(
            client,
            agent,
            "Invoices are paid within thirty days",
            type="fact",
            user_id="u1",
            session_id="s1",
            metadata={"priority": 2},
        )

        hybrid = client.recall(agent, "Order 4711 ships from Lyon on Monday", top_k=10)
        assert hybrid.mode == "hybrid" and hybrid.results[0].memory_id == lyon
        fused = [hit.scores.fused for hit in hybrid.results]
        assert fused == sorted(fused, reverse=True)
        assert all(hit.score == hit.scores.dense for hit in hybrid.results)
        top = hybrid.results[0]
        assert (top.status, top.user_id, top.session_id) == ("active", "u1", None)
        assert top.metadata == {"priority": 3, "channel": "email", "seen": "2025-01-05T00:00:00Z"}
        assert top.supersedes is None and top.superseded_by is None

        lexical = client.recall(agent, "4711", mode="lexical", min_score=-1.0, top_k=10)
        assert lexical.mode == "lexical" and lexical.results[0].memory_id == lyon
        assert (lexical.results[0].scores.lexical or 0.0) > 0.0

        def dense(wanted: dict[str, Any]) -> set[str]:
            found = client.recall(
                agent, "orders and invoices", mode="dense", min_score=-1.0, top_k=10, filter=wanted
            )
            assert found.mode == "dense"
            return _ids(found)

        assert dense({"user_id": "u1"}) == {lyon, invoices}
        assert dense({"session_id": "s1"}) == {invoices}
        assert dense({"type": "fact"}) == {invoices}
        assert dense({"metadata": {"priority": {"gte": 2}}}) == {lyon, invoices}
        assert dense({"metadata": {"priority": {"gte": 2, "lte": 2}}}) == {invoices}
        assert dense({"metadata": {"channel": {"in": ["phone", "fax"]}}}) == {berlin}
        assert dense({"metadata": {"channel": "email"}}) == {lyon}
        assert dense({"metadata": {"channel": {"exists": False}}}) == {invoices}
        since = datetime(2025, 1, 1, tzinfo=UTC)
        assert dense({"metadata": {"seen": {"gte": since}}}) == {lyon}

        recent = client.recall(agent, "orders", min_score=-1.0, recency_half_life_days=0.5)
        assert recent.results and recent.mode == "hybrid"


def test_listing_pages_counts_and_scoped_clears(memory_stack: Stack) -> None:
    with EngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = client.create_agent("listing").agent_id
        alpha = _stored(client, agent, "Alpha note", user_id="u1", session_id="s1")
        beta = _stored(client, agent, "Beta note", user_id="u1", session_id="s1")
        gamma = _stored(client, agent, "Gamma note", user_id="u1")
        delta = _stored(client, agent, "Delta note", user_id="u2")
        epsilon = _stored(client, agent, "Epsilon note", user_id="u2")
        other = client.create_agent("other").agent_id
        zeta = _stored(client, other, "Zeta note", user_id="u2")

        first = client.list_memories(agent, user_id="u1", limit=2)
        assert [m.memory_id for m in first.memories] == [alpha, beta] and first.next_cursor
        last = client.list_memories(agent, user_id="u1", limit=2, cursor=first.next_cursor)
        assert [m.memory_id for m in last.memories] == [gamma] and last.next_cursor is None

        walked = [m.memory_id for m in client.iter_memories(agent, user_id="u1", page_size=2)]
        assert walked == [alpha, beta, gamma]
        newest = [m.memory_id for m in client.iter_memories(agent, order="recent", page_size=2)]
        assert newest == [epsilon, delta, gamma, beta, alpha]
        in_session = client.list_memories(agent, filter={"session_id": "s1"})
        assert [m.memory_id for m in in_session.memories] == [alpha, beta]
        assert [m.memory_id for m in client.iter_memories(agent, search="GAMMA")] == [gamma]
        across = [m.memory_id for m in client.iter_memories(user_id="u2", page_size=2)]
        assert across == [delta, epsilon, zeta]

        counted = client.count_memories(agent)
        assert counted.count == 5 and counted.by_status == {"active": 5}
        assert counted.by_type == {"conversation": 5}
        assert client.count_memories(agent, user_id="u1").count == 3
        assert client.count_memories(agent, filter={"session_id": "s1"}).count == 2
        assert client.count_memories(agent, search="note", user_id="u2").count == 2

        assert client.clear_memories(agent, user_id="u1", session_id="s1").withdrawn == 2
        assert client.count_memories(agent).by_status == {"active": 3, "withdrawn": 2}
        assert client.clear_memories(agent, user_id="u2").withdrawn == 2
        assert client.count_memories(other).by_status == {"active": 1}, "another agent's stay"
        assert client.clear_memories(agent).withdrawn == 1
        assert client.count_memories(agent, status="active").count == 0


async def test_async_scoped_listing_and_count(memory_stack: Stack) -> None:
    async with AsyncEngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = (await client.create_agent("async-listing")).agent_id
        for content, user in (("Kappa note", "u1"), ("Lambda note", "u2")):
            accepted = await client.write_memory(agent, content, user_id=user)
            await client.wait_for_memory(agent, accepted.memory_id, 60)
        mine = [m.content async for m in client.iter_memories(agent, filter={"user_id": "u1"})]
        counted = await client.count_memories(agent, user_id="u2")
    assert mine == ["Kappa note"] and counted.count == 1


def test_memory_commands_through_the_cli(memory_stack: Stack) -> None:
    env = {"ENGRAM_URL": memory_stack.gateway.url, "ENGRAM_API_KEY": memory_stack.key}
    with EngramClient(memory_stack.gateway.url, memory_stack.key) as client:
        agent = client.create_agent("cli").agent_id

    stored = engram(
        "memory", "store", agent, "Depot Lyon opens at six", "--user", "u1", "--wait", env=env
    )
    assert stored.returncode == 0, stored.stderr
    memory_id, status = stored.stdout.split()
    assert status == "active"

    again = engram("memory", "store", agent, "depot lyon OPENS at six", "--user", "u1", env=env)
    assert again.returncode == 0 and again.stdout.strip() == memory_id
    assert "deduplicated" in again.stderr

    recalled = engram(
        "memory",
        "recall",
        agent,
        "Depot Lyon opens at six",
        "--user",
        "u1",
        "--mode",
        "dense",
        env=env,
    )
    assert recalled.returncode == 0, recalled.stderr
    header, hit, *_ = recalled.stdout.splitlines()
    assert header.split() == ["FUSED", "DENSE", "LEXICAL", "MEMORY_ID", "CONTENT"]
    assert hit.split()[3] == memory_id

    listed = engram("memory", "list", agent, "--all", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [m["memory_id"] for m in json.loads(listed.stdout)["memories"]] == [memory_id]
    counted = engram("memory", "count", agent, "--user", "u1", env=env)
    assert counted.returncode == 0 and counted.stdout.splitlines()[0] == "1"

    assert engram("memory", "clear", agent, env=env).returncode == 2
    cleared = engram("memory", "clear", agent, "--user", "u1", "--yes", env=env)
    assert cleared.returncode == 0 and cleared.stdout.strip() == "1 withdrawn"
