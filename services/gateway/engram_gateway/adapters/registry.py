"""Tenants, API keys and agents in the gateway's own database; every query carries the tenant."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from engram_gateway.domain.access import ADMIN
from engram_gateway.domain.keys import (
    NO_KEY_HASH,
    NO_KEY_SALT,
    IssuedKey,
    issue_key,
    parse_key,
    verify,
)
from engram_gateway.domain.model import Agent, Caller
from engram_gateway.domain.recent import Recent
from engram_gateway.domain.single_flight import SingleFlight
from engram_platform.indexes import Indexes

KeyCheck = Callable[[str, str, str], bool]
"""(secret, salt, stored hash) -> whether they match; `keys.verify` outside tests."""
TENANTS = "tenants"
API_KEYS = "api_keys"
AGENTS = "agents"
INDEXES: Indexes = {
    AGENTS: [IndexModel([("tenant_id", ASCENDING), ("deleted", ASCENDING)])],
    API_KEYS: [
        IndexModel([("tenant_id", ASCENDING), ("created_at", ASCENDING), ("_id", ASCENDING)])
    ],
}
"""A tenant's live agents and its keys; keys and agents are otherwise read by `_id`."""


class Registry:
    """The gateway's store of who may call and which agents they own.

    Found keys are remembered for `key_seconds` (default `cache_seconds`) and owned agents for
    `cache_seconds` (two database trips less per request); unknown ones never are. A key revoked
    through another gateway instance, or an agent deleted there, stops working within that time;
    this instance forgets a key it revokes and an agent it deletes at once.
    """

    def __init__(
        self,
        db: Any,
        *,
        cache_seconds: float = 0.0,
        key_seconds: float | None = None,
        check: KeyCheck = verify,
    ) -> None:
        self.db = db
        self._check = check
        self._keys: Recent[dict[str, Any]] = Recent(
            cache_seconds if key_seconds is None else key_seconds
        )
        self._agents: Recent[Agent] = Recent(cache_seconds)
        self._key_reads: SingleFlight[dict[str, Any] | None] = SingleFlight()

    async def create_tenant(self, name: str) -> tuple[str, IssuedKey]:
        """A new tenant with its first API key, an admin key (it manages the tenant's keys);
        the plaintext key is only in the return value."""
        tenant_id = f"tnt_{secrets.token_hex(8)}"
        now = datetime.now(UTC)
        await self.db[TENANTS].insert_one({"_id": tenant_id, "name": name, "created_at": now})
        key = await self.add_key(tenant_id, (ADMIN,))
        return tenant_id, key

    async def add_key(
        self, tenant_id: str, roles: tuple[str, ...] = (), *, name: str | None = None
    ) -> IssuedKey:
        """Issue another key for a tenant (keys are bound to exactly one tenant)."""
        key = issue_key()
        await self.db[API_KEYS].insert_one(
            {
                "_id": key.key_id,
                "tenant_id": tenant_id,
                "name": name,
                "secret_hash": key.secret_hash,
                "salt": key.salt,
                "roles": list(roles),
                "created_at": datetime.now(UTC),
                "revoked": False,
            }
        )
        return key

    async def authenticate(self, presented: str) -> Caller | None:
        """The caller for a presented key, or None (malformed, unknown, revoked or wrong).

        Only a key that verifies is answered from memory: a wrong secret reads the store like an
        unknown id does, so neither a 401's work nor its timing tells whether a key id exists.
        Requests missing the memo at once share one read of the id, whether it exists or not."""
        parts = parse_key(presented)
        if parts is None:
            return None
        key_id, secret = parts
        row = self._keys.get(key_id)
        if row is not None and self._check(secret, row["salt"], row["secret_hash"]):
            return _caller(key_id, row)
        row = await self._key_reads.read(
            key_id, lambda: self.db[API_KEYS].find_one({"_id": key_id})
        )
        if not row or row.get("revoked"):
            self._check(secret, NO_KEY_SALT, NO_KEY_HASH)
            return None
        if not self._check(secret, row["salt"], row["secret_hash"]):
            return None
        self._keys.put(key_id, row)
        return _caller(key_id, row)

    def forget_key(self, key_id: str) -> None:
        """Stop remembering a key this instance just revoked."""
        self._keys.forget(key_id)

    async def create_agent(self, tenant_id: str, name: str | None) -> Agent:
        """Register an agent under the caller's tenant."""
        agent = Agent(
            agent_id=f"agt_{secrets.token_hex(12)}",
            tenant_id=tenant_id,
            name=name,
            created_at=datetime.now(UTC),
        )
        await self.db[AGENTS].insert_one(
            {"_id": agent.agent_id, **agent.model_dump(exclude={"agent_id"}), "deleted": False}
        )
        return agent

    async def ensure_agent(self, tenant_id: str, agent_id: str, name: str | None) -> str:
        """Register an agent under a chosen id unless this tenant already has it: `created`,
        `present`, or `taken` when the id is held otherwise (another tenant's, or deleted)."""
        if await self.get_agent(tenant_id, agent_id) is not None:
            return "present"
        agent = Agent(
            agent_id=agent_id, tenant_id=tenant_id, name=name, created_at=datetime.now(UTC)
        )
        try:
            await self.db[AGENTS].insert_one(
                {"_id": agent.agent_id, **agent.model_dump(exclude={"agent_id"}), "deleted": False}
            )
        except DuplicateKeyError:
            return "taken"
        return "created"

    async def get_agent(self, tenant_id: str, agent_id: str) -> Agent | None:
        """The agent only if this tenant owns it (the predicate is in the query, not after it)."""
        known = self._agents.get((tenant_id, agent_id))
        if known is not None:
            return known
        row = await self.db[AGENTS].find_one(
            {"_id": agent_id, "tenant_id": tenant_id, "deleted": False}
        )
        if row is None:
            return None
        agent = _agent(row)
        self._agents.put((tenant_id, agent_id), agent)
        return agent

    async def list_agents(self, tenant_id: str) -> list[Agent]:
        """The tenant's live agents, oldest first."""
        cursor = self.db[AGENTS].find({"tenant_id": tenant_id, "deleted": False})
        return sorted([_agent(r) async for r in cursor], key=lambda a: (a.created_at, a.agent_id))

    async def delete_agent_with(
        self, outbox: Any, tenant_id: str, agent_id: str, events: list[Any]
    ) -> None:
        """Mark an agent deleted and stage its events in the same document write."""
        await outbox.write_with_events(
            self.db[AGENTS],
            agent_id,
            {"$set": {"deleted": True, "deleted_at": datetime.now(UTC)}},
            events,
            upsert=False,
            scope={"tenant_id": tenant_id},
        )
        self._agents.forget((tenant_id, agent_id))


def _agent(row: dict[str, Any]) -> Agent:
    return Agent(
        agent_id=row["_id"],
        tenant_id=row["tenant_id"],
        name=row.get("name"),
        created_at=row["created_at"],
    )


def _caller(key_id: str, row: dict[str, Any]) -> Caller:
    """The caller a verified key row names."""
    return Caller(tenant_id=row["tenant_id"], key_id=key_id, roles=tuple(row.get("roles", ())))
