"""`/v1/agents`: register, list and delete agents within the caller's tenant."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, ConfigDict, Field

from engram_events import new_event
from engram_events.catalog import AGENT_DELETED
from engram_events.payloads.memories import AgentDeleted
from engram_events.values import Text
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps
from engram_platform.problems import Problem

router = APIRouter(prefix="/v1/agents", tags=["agents"])
AgentId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class CreateAgent(BaseModel):
    """Optional display name; nothing else is needed to register an agent."""

    model_config = ConfigDict(extra="forbid")

    name: Text | None = Field(default=None, max_length=200)


class AgentOut(BaseModel):
    """An agent as the API shows it."""

    agent_id: str
    name: str | None
    created_at: datetime


class AgentList(BaseModel):
    """The caller's agents."""

    agents: list[AgentOut]


@router.post("", status_code=201, response_model=AgentOut)
async def create_agent(
    caller: CallerDep, registry: RegistryDep, body: CreateAgent | None = None
) -> AgentOut:
    """Register an agent under the caller's tenant."""
    agent = await registry.create_agent(caller.tenant_id, body.name if body else None)
    return AgentOut(**agent.model_dump())


@router.get("", response_model=AgentList)
async def list_agents(caller: CallerDep, registry: RegistryDep) -> AgentList:
    """Only the caller's own agents."""
    agents = await registry.list_agents(caller.tenant_id)
    return AgentList(agents=[AgentOut(**a.model_dump()) for a in agents])


@router.get("/{agent_id}", response_model=AgentOut)
async def get_agent(agent_id: AgentId, caller: CallerDep, registry: RegistryDep) -> AgentOut:
    """One agent; another tenant's agent is 404, never 403."""
    agent = await registry.get_agent(caller.tenant_id, agent_id)
    if agent is None:
        raise Problem(404, detail="no such agent")
    return AgentOut(**agent.model_dump())


@router.delete("/{agent_id}", status_code=204)
async def delete_agent(
    agent_id: AgentId, deps: Deps, caller: CallerDep, registry: RegistryDep
) -> Response:
    """Delete an owned agent (another tenant's is 404); its memories are withdrawn after.

    The deletion and its `agent.deleted` event are one single-document write (outbox).
    """
    if await registry.get_agent(caller.tenant_id, agent_id) is None:
        raise Problem(404, detail="no such agent")
    deleted = new_event(AGENT_DELETED, AgentDeleted(agent_id=agent_id), tenant_id=caller.tenant_id)
    await registry.delete_agent_with(deps.outbox, caller.tenant_id, agent_id, [deleted])
    return Response(status_code=204)
