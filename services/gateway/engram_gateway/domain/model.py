"""Gateway-owned entities: tenants, callers and agents."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict


class Caller(BaseModel):
    """Who is calling: the tenant the presented key belongs to."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    key_id: str
    roles: tuple[str, ...] = ()


class Agent(BaseModel):
    """An agent registered under a tenant."""

    agent_id: str
    tenant_id: str
    name: str | None = None
    created_at: datetime
