"""Agent memories: write requests from the gateway, outcomes from the memory service."""

from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, Field, StringConstraints

from engram_events.ids import Id, Sha256
from engram_events.payloads._base import Payload
from engram_events.payloads.embeddings import VectorProvenance
from engram_events.values import Metadata, Text

MemoryType = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")
]
WithdrawReason = Literal["retention", "deleted", "agent_deleted", "source_tombstoned", "expired"]


class ExtractedBy(Payload):
    """A memory a model wrote: the model the endpoint reported, the conversation it read, its
    decision and a hash of the output it was decided from (never the output itself)."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    conversation_id: Id
    decision: Literal["add", "supersede"]
    output_sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{16,64}$")]


class MemoryWrite(BaseModel):
    """What a caller asks to remember: the gateway validates a request with these fields and
    the memory service stores them, so one set of constraints holds at both ends."""

    content: Text = Field(max_length=64_000)
    type: MemoryType = "conversation"
    metadata: Metadata = Field(default_factory=dict)
    derived_from: list[Id] = Field(default_factory=list, max_length=100)
    supersedes: Id | None = None
    idempotency_key: Id | None = None
    user_id: Id | None = Field(default=None, description="the end user this memory is about")
    session_id: Id | None = Field(default=None, description="the session it came from")
    allow_duplicate: bool = Field(
        default=False, description="store it even if a live memory in this scope says the same"
    )
    expires_at: AwareDatetime | None = Field(
        default=None, description="when it leaves recall and listings (status `expired`)"
    )


EditReason = Annotated[Text, Field(max_length=500)]
"""Why a memory was edited: free text a person or app gives, at most 500 characters, that
encodes as UTF-8 (as content must)."""


class Author(Payload):
    """Who asked for a write: the API key's id (never its secret) and the role it holds."""

    key_id: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    role: Annotated[str, StringConstraints(min_length=1, max_length=32)]


class MemoryWriteRequested(Payload, MemoryWrite):
    """An agent wants to remember something; validated again by the memory service.

    `author` and `reason` are optional additions within the version: the gateway names the
    key that asked (every write) and, for an edit, why; older producers send neither."""

    memory_id: Id
    agent_id: Id
    extracted_by: ExtractedBy | None = None
    author: Author | None = None
    reason: EditReason | None = None
    created_at: AwareDatetime | None = None
    """When the memory was first made, for one an import restores (its row keeps the source's
    time, so listings, retention and recency match); otherwise the request's time."""
    vector: list[float] | None = Field(default=None, max_length=4096)
    """An imported memory's stored vector, used as it is when `vector_provenance` names the
    memory service's embedder (otherwise the content is embedded again)."""
    vector_provenance: VectorProvenance | None = None


class MemoryStored(Payload):
    """A memory row and its vector are durable and recallable."""

    memory_id: Id
    agent_id: Id
    type: MemoryType
    content_sha256: Sha256
    provenance: VectorProvenance
    derived_from: list[Id] = Field(default_factory=list)
    supersedes: Id | None = None
    user_id: Id | None = None
    session_id: Id | None = None


class MemoryRejected(Payload):
    """A write was refused (e.g. empty content, or a duplicate of a live memory) before any
    embedding."""

    memory_id: Id
    agent_id: Id
    reason: str
    duplicate_of: Id | None = None


class MemoryWithdrawn(Payload):
    """A memory left recall; its row keeps status and hashes only."""

    memory_id: Id
    agent_id: Id
    reason: WithdrawReason
    content_sha256: Sha256 | None = None
    prune_job_id: Id | None = None
    because_of: Id | None = None


class AgentDeleted(Payload):
    """The gateway deleted an agent; its memories must be withdrawn."""

    agent_id: Id
