"""The fifteen Engram tools: each asks the gateway with the caller's key and answers what it said."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import AwareDatetime, BaseModel, Field

from engram_client import AsyncEngramClient, EngramError
from engram_mcp import descriptions
from engram_mcp.arguments import (
    AgentId,
    Filter,
    KnowledgeKinds,
    MemoryId,
    MemoryStatus,
    MemoryType,
    Metadata,
    MinScore,
    Mode,
    ScopeId,
)
from engram_mcp.keys import KeySource, MissingKey
from engram_mcp.results import answer, local_problem, problem

Connect = Callable[[str], AbstractAsyncContextManager[AsyncEngramClient]]
"""Opens a gateway client acting with the given API key."""
Call = Callable[[AsyncEngramClient], Awaitable[BaseModel | dict[str, Any]]]
Ctx = Context[Any, Any]
Moment = Annotated[
    str | None,
    Field(min_length=1, max_length=64, description="what was true then: an ISO date or time"),
]
AsOf = Annotated[
    str | None,
    Field(min_length=1, max_length=64, description="what Engram knew then: ISO date or time"),
]
MAX_TTL_SECONDS = 3650 * 86_400
"""The gateway's bound on a memory's expiry: ten years."""

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
FORGET = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


@dataclass(frozen=True)
class EngramTools:
    """Tool handlers bound to how keys are found and how the gateway is reached."""

    connect: Connect
    keys: KeySource

    async def _run(self, ctx: Ctx, call: Call) -> CallToolResult:
        """One gateway exchange under the caller's key; a problem becomes a tool error."""
        try:
            key = self.keys.key_for(ctx.headers)
        except MissingKey as missing:
            return local_problem(401, "unauthorized", "Missing or invalid API key", str(missing))
        try:
            async with self.connect(key) as client:
                return answer(await call(client))
        except EngramError as error:
            return problem(error)

    async def agent_create(
        self,
        ctx: Ctx,
        name: Annotated[
            str | None, Field(min_length=1, max_length=200, description="a label for people")
        ] = None,
    ) -> CallToolResult:
        """Register an agent."""
        return await self._run(ctx, lambda client: client.create_agent(name))

    async def agent_list(self, ctx: Ctx) -> CallToolResult:
        """List the agents of your key."""

        async def listed(client: AsyncEngramClient) -> dict[str, Any]:
            found = await client.list_agents()
            return {"agents": [a.model_dump(mode="json", exclude_none=True) for a in found]}

        return await self._run(ctx, listed)

    async def memory_write(
        self,
        agent_id: AgentId,
        content: Annotated[
            str, Field(min_length=1, max_length=64_000, description="the memory itself, as text")
        ],
        ctx: Ctx,
        type: MemoryType = "conversation",
        metadata: Annotated[
            Metadata | None, Field(description="flat KEY: scalar pairs to filter on later")
        ] = None,
        user_id: Annotated[ScopeId | None, Field(description="the end user it is about")] = None,
        session_id: Annotated[ScopeId | None, Field(description="the session it came from")] = None,
        supersedes: Annotated[
            MemoryId | None, Field(description="id of the memory this one replaces")
        ] = None,
        derived_from: Annotated[
            list[ScopeId] | None,
            Field(max_length=100, description="ids of documents or records it was derived from"),
        ] = None,
        allow_duplicate: Annotated[
            bool, Field(description="store it even if a live memory in this scope says the same")
        ] = False,
        idempotency_key: Annotated[
            ScopeId | None, Field(description="reuse when retrying this same write")
        ] = None,
        ttl_seconds: Annotated[
            int | None,
            Field(ge=1, le=MAX_TTL_SECONDS, description="forget it this many seconds from now"),
        ] = None,
        expires_at: Annotated[
            AwareDatetime | None,
            Field(description="forget it at this ISO-8601 time (with a timezone); not with ttl"),
        ] = None,
    ) -> CallToolResult:
        """Store a memory."""
        return await self._run(
            ctx,
            lambda client: client.write_memory(
                agent_id,
                content,
                type=type,
                metadata=metadata,
                user_id=user_id,
                session_id=session_id,
                supersedes=supersedes,
                derived_from=derived_from,
                allow_duplicate=allow_duplicate,
                idempotency_key=idempotency_key,
                ttl_seconds=ttl_seconds,
                expires_at=expires_at,
            ),
        )

    async def memory_recall(
        self,
        agent_id: AgentId,
        query: Annotated[
            str, Field(min_length=1, max_length=8000, description="the question, in plain words")
        ],
        ctx: Ctx,
        top_k: Annotated[int, Field(ge=1, le=100, description="at most this many hits")] = 5,
        mode: Annotated[Mode, Field(description="how hits are ranked")] = "hybrid",
        filter: Filter = None,
        min_score: MinScore = None,
        types: Annotated[
            list[MemoryType] | None, Field(max_length=50, description="only these memory types")
        ] = None,
        include_statuses: Annotated[
            list[Literal["active", "superseded"]] | None,
            Field(max_length=2, description="default active only; add superseded for history"),
        ] = None,
        recency_half_life_days: Annotated[
            float | None,
            Field(gt=0, le=36_500, description="favour newer memories: halve a score per this age"),
        ] = None,
    ) -> CallToolResult:
        """Recall memories relevant to a query."""
        return await self._run(
            ctx,
            lambda client: client.recall(
                agent_id,
                query,
                top_k=top_k,
                mode=mode,
                filter=filter,
                min_score=min_score,
                types=types,
                include_statuses=include_statuses,
                recency_half_life_days=recency_half_life_days,
            ),
        )

    async def memory_list(
        self,
        ctx: Ctx,
        agent_id: Annotated[
            ScopeId | None, Field(description="one agent's memories; all your agents' if omitted")
        ] = None,
        search: Annotated[
            str | None, Field(min_length=1, max_length=256, description="literal substring")
        ] = None,
        type: MemoryType | None = None,
        status: MemoryStatus | None = None,
        user_id: ScopeId | None = None,
        session_id: ScopeId | None = None,
        filter: Filter = None,
        order: Literal["oldest", "recent"] = "oldest",
        limit: Annotated[int, Field(ge=1, le=1000, description="page size")] = 20,
        cursor: Annotated[
            str | None, Field(max_length=1024, description="the previous page's next_cursor")
        ] = None,
    ) -> CallToolResult:
        """List memories page by page."""
        return await self._run(
            ctx,
            lambda client: client.list_memories(
                agent_id,
                search=search,
                type=type,
                status=status,
                user_id=user_id,
                session_id=session_id,
                filter=filter,
                order=order,
                limit=limit,
                cursor=cursor,
            ),
        )

    async def memory_update(
        self,
        agent_id: AgentId,
        memory_id: Annotated[MemoryId, Field(description="the live version to edit")],
        ctx: Ctx,
        content: Annotated[
            str | None, Field(min_length=1, max_length=64_000, description="the new content")
        ] = None,
        metadata: Annotated[
            Metadata | None, Field(description="replaces the whole metadata object")
        ] = None,
        reason: Annotated[
            str | None, Field(max_length=500, description="why, for the memory's history")
        ] = None,
        ttl_seconds: Annotated[
            int | None,
            Field(
                ge=1,
                le=MAX_TTL_SECONDS,
                description="the new version expires this many seconds from now",
            ),
        ] = None,
        expires_at: Annotated[
            AwareDatetime | None,
            Field(description="the new version expires then (ISO-8601 with a timezone)"),
        ] = None,
    ) -> CallToolResult:
        """Edit a memory: a new version superseding it."""
        expiring = ttl_seconds is not None or expires_at is not None
        if content is None and metadata is None and not expiring:
            return local_problem(
                422,
                "validation-error",
                "Request validation failed",
                "give content, metadata and/or an expiry",
            )
        return await self._run(
            ctx,
            lambda client: client.update_memory(
                agent_id,
                memory_id,
                content=content,
                metadata=metadata,
                reason=reason,
                ttl_seconds=ttl_seconds,
                expires_at=expires_at,
            ),
        )

    async def memory_history(
        self,
        agent_id: AgentId,
        memory_id: Annotated[MemoryId, Field(description="any version of the memory")],
        ctx: Ctx,
    ) -> CallToolResult:
        """Every version of a memory."""
        return await self._run(ctx, lambda client: client.memory_history(agent_id, memory_id))

    async def memory_forget(
        self,
        agent_id: AgentId,
        ctx: Ctx,
        memory_id: Annotated[MemoryId | None, Field(description="withdraw this one memory")] = None,
        user_id: Annotated[
            ScopeId | None, Field(description="withdraw every memory about this user")
        ] = None,
        session_id: Annotated[
            ScopeId | None, Field(description="withdraw every memory of this session")
        ] = None,
        all_memories: Annotated[
            bool, Field(description="true to withdraw every memory of the agent")
        ] = False,
    ) -> CallToolResult:
        """Withdraw one memory or a scope of them."""
        scoped = user_id is not None or session_id is not None
        if [memory_id is not None, scoped, all_memories].count(True) != 1:
            return local_problem(
                422,
                "validation-error",
                "Request validation failed",
                "give exactly one of memory_id, user_id/session_id, or all_memories: true",
            )
        if memory_id is not None:
            return await self._run(ctx, lambda client: client.delete_memory(agent_id, memory_id))
        return await self._run(
            ctx,
            lambda client: client.clear_memories(agent_id, user_id=user_id, session_id=session_id),
        )

    async def knowledge_search(
        self,
        query: Annotated[
            str, Field(min_length=1, max_length=2000, description="what to look for, in words")
        ],
        ctx: Ctx,
        top_k: Annotated[int, Field(ge=1, le=1000, description="at most this many hits")] = 5,
        mode: Annotated[Mode, Field(description="how hits are ranked")] = "hybrid",
        min_score: MinScore = None,
        kinds: KnowledgeKinds = None,
        expand: Annotated[
            int | None,
            Field(ge=1, le=2, description="add the facts of entities this many relations away"),
        ] = None,
        valid_at: Moment = None,
        as_of: AsOf = None,
    ) -> CallToolResult:
        """Search facts, article sections and document passages."""
        return await self._run(
            ctx,
            lambda client: client.search_knowledge(
                query,
                top_k=top_k,
                mode=mode,
                min_score=min_score,
                kinds=kinds,
                expand=expand,
                valid_at=valid_at,
                as_of=as_of,
            ),
        )

    async def knowledge_relations(
        self,
        entity_id: Annotated[
            str, Field(min_length=1, max_length=256, description="e.g. supplier:s1")
        ],
        ctx: Ctx,
        direction: Literal["out", "in", "both"] = "both",
        predicate: Annotated[
            str | None, Field(min_length=1, max_length=100, description="only this predicate")
        ] = None,
        depth: Annotated[int, Field(ge=1, le=3, description="hops from the entity")] = 1,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
        cursor: Annotated[
            str | None, Field(min_length=1, max_length=2000, description="next_cursor")
        ] = None,
        valid_at: Moment = None,
        as_of: AsOf = None,
    ) -> CallToolResult:
        """List an entity's relations, up to three hops."""
        return await self._run(
            ctx,
            lambda client: client.entity_relations(
                entity_id,
                direction=direction,
                predicate=predicate,
                depth=depth,
                limit=limit,
                cursor=cursor,
                valid_at=valid_at,
                as_of=as_of,
            ),
        )

    async def knowledge_path(
        self,
        from_entity: Annotated[
            str, Field(min_length=1, max_length=256, description="e.g. supplier:s1")
        ],
        to_entity: Annotated[
            str, Field(min_length=1, max_length=256, description="e.g. carrier:c3")
        ],
        ctx: Ctx,
        max_depth: Annotated[int, Field(ge=1, le=4, description="at most this many hops")] = 3,
    ) -> CallToolResult:
        """Find the shortest paths between two entities."""
        return await self._run(
            ctx, lambda client: client.find_paths(from_entity, to_entity, max_depth=max_depth)
        )

    async def knowledge_entity(
        self,
        entity_id: Annotated[
            str, Field(min_length=1, max_length=256, description="e.g. carrier:c1")
        ],
        ctx: Ctx,
        include_withdrawn: bool = False,
        valid_at: Moment = None,
        as_of: AsOf = None,
    ) -> CallToolResult:
        """Read one entity's article and facts."""
        return await self._run(
            ctx,
            lambda client: client.get_entity(
                entity_id, include_withdrawn=include_withdrawn, valid_at=valid_at, as_of=as_of
            ),
        )

    async def contradictions_list(
        self,
        ctx: Ctx,
        status: Literal["open", "resolved"] | None = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> CallToolResult:
        """List contradictions between sources."""

        async def listed(client: AsyncEngramClient) -> dict[str, Any]:
            found = await client.list_contradictions(status=status, limit=limit)
            return {"contradictions": [c.model_dump(mode="json", exclude_none=True) for c in found]}

        return await self._run(ctx, listed)

    async def knowledge_edit(
        self,
        entity_id: Annotated[
            str, Field(min_length=1, max_length=256, description="e.g. carrier:c1")
        ],
        attribute: Annotated[str, Field(min_length=1, max_length=200)],
        action: Literal["assert", "withdraw"],
        reason: Annotated[
            str, Field(min_length=1, max_length=2000, description="why, kept with the edit")
        ],
        ctx: Ctx,
        value: Annotated[
            str | int | float | bool | None,
            Field(description="the value to assert or withdraw (withdraw: every value if none)"),
        ] = None,
    ) -> CallToolResult:
        """Assert or withdraw a fact as a curator."""
        if action == "assert":
            if value is None:
                return local_problem(
                    422, "validation-error", "Request validation failed", "assert needs a value"
                )
            return await self._run(
                ctx, lambda client: client.assert_fact(entity_id, attribute, value, reason=reason)
            )
        if value is None:
            return await self._run(
                ctx, lambda client: client.withdraw_fact(entity_id, attribute, reason=reason)
            )
        return await self._run(
            ctx,
            lambda client: client.withdraw_fact(entity_id, attribute, reason=reason, value=value),
        )

    async def document_submit(
        self,
        name: Annotated[
            str,
            Field(min_length=1, max_length=512, description="file name, e.g. carriers.csv"),
        ],
        text: Annotated[str, Field(min_length=1, description="the document's content")],
        ctx: Ctx,
        mime: Annotated[
            str | None,
            Field(min_length=3, max_length=127, description="content type, e.g. text/csv"),
        ] = None,
    ) -> CallToolResult:
        """Submit a text document for extraction."""
        return await self._run(ctx, lambda client: client.upload_document(name, text, mime=mime))

    def register(self, server: MCPServer[Any]) -> None:
        """Add every tool with its description and hints."""
        table = (
            (self.agent_create, descriptions.AGENT_CREATE, WRITE),
            (self.agent_list, descriptions.AGENT_LIST, READ),
            (self.memory_write, descriptions.MEMORY_WRITE, WRITE),
            (self.memory_recall, descriptions.MEMORY_RECALL, READ),
            (self.memory_list, descriptions.MEMORY_LIST, READ),
            (self.memory_update, descriptions.MEMORY_UPDATE, WRITE),
            (self.memory_history, descriptions.MEMORY_HISTORY, READ),
            (self.memory_forget, descriptions.MEMORY_FORGET, FORGET),
            (self.knowledge_search, descriptions.KNOWLEDGE_SEARCH, READ),
            (self.knowledge_entity, descriptions.KNOWLEDGE_ENTITY, READ),
            (self.knowledge_relations, descriptions.KNOWLEDGE_RELATIONS, READ),
            (self.knowledge_path, descriptions.KNOWLEDGE_PATH, READ),
            (self.contradictions_list, descriptions.CONTRADICTIONS_LIST, READ),
            (self.knowledge_edit, descriptions.KNOWLEDGE_EDIT, WRITE),
            (self.document_submit, descriptions.DOCUMENT_SUBMIT, WRITE),
        )
        for handler, description, hints in table:
            server.add_tool(
                handler,
                name=handler.__name__,
                description=description,
                annotations=hints,
                structured_output=False,
            )
