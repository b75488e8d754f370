"""Each agent's own retention rules in Mongo, one document keyed `tenant:agent`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engram_events.retention import AgentRetention

RETENTION = "memory_retention"


def rules_id(tenant_id: str, agent_id: str) -> str:
    """Keyed by tenant first, like rows."""
    return f"{tenant_id}:{agent_id}"


class RetentionRules:
    """Read and replace one agent's rules by `_id`; typed on the way out."""

    def __init__(self, db: Any) -> None:
        self.collection = db[RETENTION]

    async def get(self, tenant_id: str, agent_id: str) -> AgentRetention | None:
        """The agent's rules, or None when it never set any."""
        doc = await self.collection.find_one(
            {"_id": rules_id(tenant_id, agent_id), "tenant_id": tenant_id}
        )
        return None if doc is None else AgentRetention.model_validate({"rules": doc["rules"]})

    async def forget(self, tenant_id: str, agent_id: str) -> None:
        """Remove the agent's rules (its deletion); none is fine."""
        await self.collection.delete_one(
            {"_id": rules_id(tenant_id, agent_id), "tenant_id": tenant_id}
        )

    async def put(self, tenant_id: str, agent_id: str, retention: AgentRetention) -> None:
        """Replace the agent's rules whole."""
        key = rules_id(tenant_id, agent_id)
        await self.collection.replace_one(
            {"_id": key, "tenant_id": tenant_id},
            {
                "_id": key,
                "tenant_id": tenant_id,
                "agent_id": agent_id,
                "rules": [rule.model_dump() for rule in retention.rules],
                "updated_at": datetime.now(UTC),
            },
            upsert=True,
        )
