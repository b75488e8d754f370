"""What ingest's routes are handed: the frozen set the composition root built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends

from engram_ingest.ports import DocumentReads
from engram_platform.dependencies import provider


@dataclass(frozen=True)
class IngestDeps:
    """The documents the routes read."""

    documents: DocumentReads


Deps = Annotated[IngestDeps, Depends(provider(IngestDeps))]
