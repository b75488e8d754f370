"""Recall within an agent, proxied to the memory service.

A router of its own, included right after the single memory writes: a request is matched
against the public routes in order, and recall sat behind ~45 others (about a third of the
gateway's own CPU per recall went to matching them, twice).
"""

from __future__ import annotations

import re
from typing import Literal

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from engram_events.memory_filter import MemoryFilter
from engram_events.payloads.memories import MemoryType
from engram_gateway.api.auth import CallerDep, RegistryDep
from engram_gateway.api.dependencies import Deps
from engram_gateway.api.lean import AGENT_PATH, Admitted, PublicRoute
from engram_gateway.api.memory_proxy import AgentId, owned_agent, proxy_read
from engram_gateway.domain.rate_limits import READ
from engram_gateway.domain.text import QueryText

router = APIRouter(tags=["memories"])


class RecallQuery(BaseModel):
    """What to recall and how: `mode` picks the retrieval, `filter` narrows it inside the
    vector query, `min_score` overrides the floor on the dense score, `include_statuses`
    widens the statuses, `recency_half_life_days` favours newer memories."""

    model_config = ConfigDict(extra="forbid")

    query: QueryText = Field(min_length=1, max_length=8000)
    top_k: int = Field(default=5, ge=1, le=100)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    types: list[MemoryType] | None = Field(default=None, max_length=50)
    include_statuses: list[Literal["active", "superseded"]] | None = Field(
        default=None, max_length=2
    )
    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    filter: MemoryFilter | None = None
    recency_half_life_days: float | None = Field(default=None, gt=0, le=36_500)


@router.post("/v1/agents/{agent_id}/recall")
async def recall(
    agent_id: AgentId, body: RecallQuery, deps: Deps, caller: CallerDep, registry: RegistryDep
) -> Response:
    """Recall within the agent: dense and lexical retrieval fused (`mode`), the filter applied
    inside the vector query, the floor applied to the dense score and its drops reported."""
    await owned_agent(registry, caller, agent_id)
    return await _recalled(Admitted(deps, caller, agent_id, body))


async def _recalled(admitted: Admitted) -> Response:
    """The memory service's answer, passed on as its bytes."""
    body: RecallQuery = admitted.body
    path = f"/internal/v1/agents/{admitted.agent_id}/recall"
    query = body.model_dump(exclude_none=True, by_alias=True)
    return await proxy_read(admitted.deps, admitted.caller, path, query)


async def _nothing_more(admitted: Admitted) -> None:
    """Recall checks nothing beyond its body's model and its agent."""


LEAN_RECALL = PublicRoute(
    template="/v1/agents/{agent_id}/recall",
    pattern=re.compile(f"{AGENT_PATH}/recall"),
    route_class=READ,
    model=RecallQuery,
    admit=_nothing_more,
    answer=_recalled,
)
"""Recall as the gateway's lean layer serves it (`engram_gateway.api.lean`)."""
