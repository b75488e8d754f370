"""Failures the store reports beyond the client's own `EngramError`s."""

from __future__ import annotations

from engram_client import models


class MemoryNotStored(RuntimeError):
    """A put's memory ended other than `active` (e.g. rejected), so the item was not written."""

    def __init__(self, memory: models.Memory) -> None:
        reason = f" ({memory.reason})" if memory.reason else ""
        super().__init__(f"memory {memory.memory_id} ended {memory.status}{reason}")
        self.memory = memory
