"""What extraction's routes are handed: the frozen set the composition root built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends

from engram_extraction.ports import PassageReads, RecordReads
from engram_extraction.service.types import RecordTypes
from engram_platform.dependencies import provider


@dataclass(frozen=True)
class ExtractionDeps:
    """The records, imports, prune leftovers and passages the routes read; the record types."""

    records: RecordReads
    passages: PassageReads
    types: RecordTypes


Deps = Annotated[ExtractionDeps, Depends(provider(ExtractionDeps))]
