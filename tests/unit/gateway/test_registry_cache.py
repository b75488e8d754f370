"""Found keys and owned agents are remembered for a while; unknown ones and deletions are not."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from engram_gateway.adapters.registry import AGENTS, API_KEYS, Registry
from engram_gateway.config import GatewaySettings
from engram_gateway.domain.keys import issue_key
from engram_gateway.domain.recent import Recent

pytestmark = pytest.mark.unit


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeCollection:
    """`find_one` on exact field matches, counting the trips a real database would take."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.trips = 0

    async def find_one(self, query: dict[str, Any]) -> dict[str, Any] | None:
        self.trips += 1
        row = self.rows.get(query["_id"])
        if row is None or any(row.get(k) != v for k, v in query.items() if k != "_id"):
            return None
        return dict(row)


class FakeOutbox:
    """Applies the `$set` of a staged write, as the real outbox does in one document write."""

    async def write_with_events(
        self, collection: FakeCollection, doc_id: str, update: dict[str, Any], *_: Any, **__: Any
    ) -> None:
        collection.rows[doc_id].update(update["$set"])


def registry(seconds: float, clock: Clock) -> tuple[Registry, dict[str, FakeCollection]]:
    db = {API_KEYS: FakeCollection(), AGENTS: FakeCollection()}
    reg = Registry(db, cache_seconds=seconds)
    reg._keys.clock = clock
    reg._agents.clock = clock
    return reg, db


def add_key(db: dict[str, FakeCollection], tenant_id: str) -> str:
    key = issue_key()
    db[API_KEYS].rows[key.key_id] = {
        "_id": key.key_id,
        "tenant_id": tenant_id,
        "secret_hash": key.secret_hash,
        "salt": key.salt,
        "roles": [],
        "revoked": False,
    }
    return key.plaintext


def add_agent(db: dict[str, FakeCollection], tenant_id: str, agent_id: str) -> None:
    db[AGENTS].rows[agent_id] = {
        "_id": agent_id,
        "tenant_id": tenant_id,
        "name": None,
        "created_at": datetime.now(UTC),
        "deleted": False,
    }


def test_a_found_key_is_remembered_until_its_time_is_up() -> None:
    clock = Clock()
    reg, db = registry(5.0, clock)
    key = add_key(db, "t1")

    async def scenario() -> None:
        for _ in range(2):
            caller = await reg.authenticate(key)
            assert caller is not None and caller.tenant_id == "t1"
        assert db[API_KEYS].trips == 1
        db[API_KEYS].rows[key.split("_")[1]]["revoked"] = True
        clock.now = 5.0
        assert await reg.authenticate(key) is None
        assert db[API_KEYS].trips == 2

    asyncio.run(scenario())


def test_a_remembered_key_still_needs_its_secret() -> None:
    clock = Clock()
    reg, db = registry(5.0, clock)
    key = add_key(db, "t1")
    forged = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")

    async def scenario() -> None:
        assert await reg.authenticate(key) is not None
        assert await reg.authenticate(forged) is None

    asyncio.run(scenario())


def test_unknown_keys_and_agents_are_asked_for_every_time() -> None:
    clock = Clock()
    reg, db = registry(5.0, clock)

    async def scenario() -> None:
        assert await reg.get_agent("t1", "a1") is None
        add_agent(db, "t1", "a1")
        assert await reg.get_agent("t1", "a1") is not None
        assert db[AGENTS].trips == 2

    asyncio.run(scenario())


def test_an_agent_is_remembered_per_tenant() -> None:
    clock = Clock()
    reg, db = registry(5.0, clock)
    add_agent(db, "t1", "a1")

    async def scenario() -> None:
        assert await reg.get_agent("t1", "a1") is not None
        assert await reg.get_agent("t2", "a1") is None
        assert await reg.get_agent("t1", "a1") is not None
        assert db[AGENTS].trips == 2

    asyncio.run(scenario())


def test_an_agent_deleted_here_is_forgotten_at_once() -> None:
    clock = Clock()
    reg, db = registry(60.0, clock)
    add_agent(db, "t1", "a1")

    async def scenario() -> None:
        assert await reg.get_agent("t1", "a1") is not None
        await reg.delete_agent_with(FakeOutbox(), "t1", "a1", [])
        assert await reg.get_agent("t1", "a1") is None

    asyncio.run(scenario())


def test_zero_seconds_remembers_nothing() -> None:
    clock = Clock()
    reg, db = registry(0.0, clock)
    add_agent(db, "t1", "a1")

    async def scenario() -> None:
        for _ in range(3):
            assert await reg.get_agent("t1", "a1") is not None
        assert db[AGENTS].trips == 3

    asyncio.run(scenario())


def test_recent_keeps_at_most_its_size_oldest_out_first() -> None:
    recent: Recent[int] = Recent(10.0, size=2, clock=Clock())
    recent.put("a", 1)
    recent.put("b", 2)
    recent.put("c", 3)
    assert (recent.get("a"), recent.get("b"), recent.get("c")) == (None, 2, 3)


def test_a_key_revoked_here_is_forgotten_at_once() -> None:
    clock = Clock()
    reg, db = registry(60.0, clock)
    key = add_key(db, "t1")

    async def scenario() -> None:
        assert await reg.authenticate(key) is not None
        db[API_KEYS].rows[key.split("_")[1]]["revoked"] = True
        reg.forget_key(key.split("_")[1])
        assert await reg.authenticate(key) is None

    asyncio.run(scenario())


def test_keys_are_remembered_for_their_own_time() -> None:
    reg = Registry({}, cache_seconds=5.0, key_seconds=0.5)
    assert (reg._keys.seconds, reg._agents.seconds) == (0.5, 5.0)


def test_a_key_cache_of_a_second_or_more_is_refused() -> None:
    with pytest.raises(ValidationError):
        GatewaySettings(key_cache_seconds=1)
    assert GatewaySettings().key_cache_seconds < 1
