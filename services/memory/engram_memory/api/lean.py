"""The two internal reads the gateway calls on every write and every recall, served before
FastAPI when the call is clean (`engram_platform.lean_routes`); the FastAPI routes answer the
rest and share these answers."""

from __future__ import annotations

import json
import re
from typing import Any

from engram_memory.api.bodies import DuplicatesBody, RecallBody
from engram_memory.api.dependencies import MemoryDeps
from engram_memory.service.dedup import Candidate
from engram_memory.service.recall import EmbedderMismatch, LexicalOff
from engram_platform.lean_routes import LeanCall, LeanRoute
from engram_platform.problems import Problem

AGENT = r"(?P<agent_id>[A-Za-z0-9_-]{1,64})"
"""As strict as the routes' agent path parameter."""


def _encoded(body: dict[str, Any]) -> bytes:
    """An answer's bytes: it holds only JSON values (payload fields, floats, ids)."""
    return json.dumps(body, separators=(",", ":")).encode()


def recall_answer(body: dict[str, Any]) -> bytes:
    """A recall answer's bytes, encoded once (no jsonable_encoder, no response model)."""
    return _encoded(body)


async def recalled(deps: MemoryDeps, tenant_id: str, agent_id: str, body: RecallBody) -> bytes:
    """Top-k within the agent and the filter, ranked by the mode and floored; a 409 problem
    when the query embedder is not the collection's, or lexical recall is off."""
    try:
        found = await deps.recall.recall(
            tenant_id,
            agent_id,
            body.query,
            body.top_k,
            min_score=body.min_score,
            types=body.types,
            statuses=body.include_statuses,
            mode=body.mode,
            filter=body.filter,
            recency_half_life_days=body.recency_half_life_days,
        )
    except EmbedderMismatch as exc:
        raise Problem(
            409,
            "embedder-mismatch",
            "the query embedder differs from the embedder of the stored vectors",
            collection_fingerprint=exc.collection,
            query_fingerprint=exc.query,
        ) from None
    except LexicalOff as off:
        raise Problem(409, "lexical-disabled", str(off)) from None
    return recall_answer(
        {
            "results": found.results,
            "mode": found.mode,
            "floor": found.floor,
            "dropped_below_floor": found.dropped_below_floor,
        }
    )


async def duplicates_found(
    deps: MemoryDeps, tenant_id: str, agent_id: str, body: DuplicatesBody
) -> bytes:
    """For each candidate write, the live memory of this agent and scope already holding the
    same content (its id and status), or null."""
    candidates = [Candidate(**item.model_dump()) for item in body.items]
    found = await deps.dedup.find(tenant_id, agent_id, candidates)
    return _encoded(
        {
            "found": [
                None if row is None else {"memory_id": row.memory_id, "status": row.status}
                for row in found
            ]
        }
    )


def _deps(call: LeanCall[Any]) -> MemoryDeps:
    """What the composition root installed (as the routes' `Deps` reads it)."""
    built = getattr(call.state, "dependencies", None)
    if not isinstance(built, MemoryDeps):
        raise RuntimeError("MemoryDeps not installed: the service has not started")
    return built


async def _recall(call: LeanCall[RecallBody]) -> bytes:
    return await recalled(_deps(call), call.tenant_id, call.params["agent_id"], call.body)


async def _duplicates(call: LeanCall[DuplicatesBody]) -> bytes:
    return await duplicates_found(_deps(call), call.tenant_id, call.params["agent_id"], call.body)


RECALL = LeanRoute(
    template="/internal/v1/agents/{agent_id}/recall",
    pattern=re.compile(rf"/internal/v1/agents/{AGENT}/recall"),
    model=RecallBody,
    handler=_recall,
)
DUPLICATES = LeanRoute(
    template="/internal/v1/agents/{agent_id}/memories/duplicates",
    pattern=re.compile(rf"/internal/v1/agents/{AGENT}/memories/duplicates"),
    model=DuplicatesBody,
    handler=_duplicates,
)
LEAN_ROUTES = (RECALL, DUPLICATES)
