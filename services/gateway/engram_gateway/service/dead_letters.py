"""A tenant's dead letters: shown without their messages, and replayed to their topics once."""

from __future__ import annotations

from typing import Any

from engram_gateway.domain.dead_letters import Letter, tenant_view
from engram_gateway.ports import DeadLetters
from engram_platform.problems import Problem


class DeadLetterOffice:
    """What the public API and the ops dashboard do with a tenant's dead letters."""

    def __init__(self, box: DeadLetters) -> None:
        self.box = box

    async def read(self, tenant_id: str) -> list[Letter]:
        """The tenant's letters, newest first (the dashboard's DLQ table)."""
        return await self.box.read(tenant_id)

    async def page(self, tenant_id: str, limit: int) -> list[dict[str, Any]]:
        """The newest `limit` letters as the tenant sees them: why and which item, no message."""
        letters = await self.box.read(tenant_id)
        return [
            tenant_view(item.letter_id, item.letter, item.replayed_at is not None)
            for item in letters[:limit]
        ]

    async def replay_one(self, tenant_id: str, letter_id: str) -> str:
        """Send one letter back to its topic; 404 unknown, 409 replayed already or not
        replayable."""
        result = (await self.box.replay(tenant_id, {letter_id}))[letter_id]
        if result == "not_found":
            raise Problem(404, detail="no such dead letter")
        if result == "already_replayed":
            raise Problem(409, "already-replayed", "the dead letter was already replayed")
        if result != "replayed":
            raise Problem(409, "not-replayable", "the dead letter's topic cannot be replayed")
        return result

    async def replay_consumer(self, tenant_id: str, consumer: str) -> dict[str, str]:
        """Replay every letter of one consumer not replayed yet; each letter's result."""
        letters = await self.box.read(tenant_id)
        chosen = {
            i.letter_id for i in letters if i.letter.consumer == consumer and not i.replayed_at
        }
        return await self.box.replay(tenant_id, chosen)

    async def replay_many(self, tenant_id: str, letter_ids: set[str]) -> dict[str, str]:
        """Replay these letters; each one's result (`replayed`, `not_found`, ...)."""
        return await self.box.replay(tenant_id, letter_ids)
