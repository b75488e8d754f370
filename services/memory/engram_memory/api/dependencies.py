"""What the memory routes are handed: the frozen set the composition root built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends

from engram_memory.ports import AuditPages, ConversationRecords, MemoryRowReads
from engram_memory.service.dedup import Dedup
from engram_memory.service.deletion import Deletions
from engram_memory.service.exported_vectors import ExportedVectors
from engram_memory.service.history import History
from engram_memory.service.recall import Recall
from engram_memory.service.reindex import MemoryReindexer
from engram_memory.service.retention import Retention
from engram_platform.dependencies import provider


@dataclass(frozen=True)
class MemoryDeps:
    """The rows and conversations the routes read, and the use cases they call."""

    rows: MemoryRowReads
    conversations: ConversationRecords
    recall: Recall
    dedup: Dedup
    deletions: Deletions
    history: History
    retention: Retention
    audit: AuditPages
    """The sweeper's audit entries, which the gateway lists with its own."""
    reindex: MemoryReindexer | None = None
    vectors: ExportedVectors | None = None


Deps = Annotated[MemoryDeps, Depends(provider(MemoryDeps))]
