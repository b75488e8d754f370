"""Tool argument types, with the bounds the gateway's request models hold, described for agents."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$"

AgentId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        pattern=ID_PATTERN,
        description="id of an agent registered under your key (e.g. agt_...)",
    ),
]
ScopeId = Annotated[
    str,
    Field(min_length=1, max_length=256, pattern=ID_PATTERN),
]
MemoryId = Annotated[
    str,
    Field(min_length=1, max_length=256, pattern=ID_PATTERN, description="a memory id (mem_...)"),
]
MemoryType = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="snake_case kind of memory, e.g. conversation, fact, preference, decision",
    ),
]
Mode = Literal["hybrid", "dense", "lexical"]
KnowledgeKinds = Annotated[
    list[Literal["fact", "article_section", "passage"]] | None,
    Field(
        min_length=1,
        max_length=3,
        description="only hits of these kinds (default all); passage = cited document text",
    ),
]
MinScore = Annotated[
    float | None,
    Field(
        ge=-1.0,
        le=1.0,
        description="floor on the dense score (default: the embedder's, 0.25); 0 keeps weak hits",
    ),
]
Scalar = str | int | float | bool | None
Metadata = dict[Annotated[str, Field(min_length=1, max_length=200)], Scalar]
Filter = Annotated[
    dict[str, Any] | None,
    Field(
        description=(
            'all must hold: {"user_id": ID, "session_id": ID, "type": TYPE, "metadata": '
            '{KEY: VALUE or {"eq"|"in"|"gte"|"lte"|"exists": VALUE}}}; gte/lte take numbers or '
            "ISO-8601 timestamps"
        )
    ),
]
MemoryStatus = Literal["pending", "active", "superseded", "withdrawn", "rejected", "expired"]
