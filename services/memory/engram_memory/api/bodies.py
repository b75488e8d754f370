"""The request bodies of the memory service's internal API (scalars, lists and filters only)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from engram_embedders.reindex import ReindexTarget
from engram_events.ids import Id
from engram_events.memory_filter import MemoryFilter
from engram_events.payloads.memories import MemoryType
from engram_memory.domain.listing import Order
from engram_memory.domain.selection import Selection
from engram_vectors.ranking import Mode

Status = Literal["pending", "active", "superseded", "withdrawn", "rejected", "expired"]
RecallStatus = Literal["active", "superseded"]


class RecallBody(BaseModel):
    """A recall query: scalars, lists of scalars and the validated filter only."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=8000)
    top_k: int = Field(default=5, ge=1, le=100)
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    types: list[MemoryType] | None = Field(default=None, max_length=50)
    include_statuses: list[RecallStatus] | None = Field(default=None, max_length=2)
    mode: Mode = "hybrid"
    filter: MemoryFilter | None = None
    recency_half_life_days: float | None = Field(default=None, gt=0, le=36_500)


class ListBody(BaseModel):
    """A listing (or count) across some of the tenant's agents (the gateway names only owned
    ones): one page of at most `limit` rows after `cursor`, in `order`."""

    model_config = ConfigDict(extra="forbid")

    agent_ids: list[Id] = Field(max_length=1000)
    search: str | None = Field(default=None, max_length=500)
    type: MemoryType | None = None
    status: Status | None = None
    filter: MemoryFilter | None = None
    limit: int = Field(default=100, ge=1, le=1000)
    cursor: str | None = Field(default=None, max_length=1000)
    order: Order = "oldest"

    def selection(self, tenant_id: str) -> Selection:
        """The rows this listing walks (or this count counts), by their status now (a lapsed
        memory is `expired` at once)."""
        return Selection(
            tenant_id,
            tuple(self.agent_ids),
            (self.status,) if self.status else None,
            (self.type,) if self.type else None,
            self.filter or MemoryFilter(),
            self.search or None,
            datetime.now(UTC),
        )


class DuplicateQuery(BaseModel):
    """Content about to be written, and its scope: does a live memory already say it?"""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(max_length=64_000)
    user_id: Id | None = None
    session_id: Id | None = None
    supersedes: Id | None = None


class DuplicatesBody(BaseModel):
    """Up to a batch of candidate writes of one agent."""

    model_config = ConfigDict(extra="forbid")

    items: list[DuplicateQuery] = Field(min_length=1, max_length=100)


class VerifyBody(BaseModel):
    """Ids a prune job tombstoned; the answer counts live memories still derived from them."""

    records: list[Id] = Field(default_factory=list)
    facts: list[Id] = Field(default_factory=list)
    documents: list[Id] = Field(default_factory=list)
    conversations: list[Id] = Field(default_factory=list)


class LineageBody(BaseModel):
    """Source ids (documents, records, facts) whose derived memories are wanted."""

    model_config = ConfigDict(extra="ignore")

    ids: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(max_length=10_000)


ReindexBody = ReindexTarget
"""The embedder to move the store to."""
