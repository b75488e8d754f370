"""What the routes are handed: the objects the composition root built, typed and frozen."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends

from engram_enrichment.domain.schema import Schema
from engram_enrichment.ports import KnowledgeIndex, PassageRows
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.reindex import KnowledgeReindexer
from engram_enrichment.service.relations import RelationGraph
from engram_enrichment.service.resolution import Resolutions
from engram_enrichment.service.search import KnowledgeSearch
from engram_enrichment.service.section_vectors import SectionVectors
from engram_platform.dependencies import provider


@dataclass(frozen=True)
class EnrichmentDeps:
    """Built once in `register`; search, section vectors and the collection are None with
    recall off."""

    knowledge: KnowledgeBase
    resolutions: Resolutions
    sections: SectionVectors | None = None
    search: KnowledgeSearch | None = None
    max_top_k: int = 100
    passages: PassageRows | None = None
    vectors: KnowledgeIndex | None = None
    graph: RelationGraph | None = None
    reindex: KnowledgeReindexer | None = None
    schema: Schema = field(default_factory=Schema)
    """Which attributes are single-valued: reads in time close and contest periods by it."""


Deps = Annotated[EnrichmentDeps, Depends(provider(EnrichmentDeps))]
"""A route's dependencies, as one typed parameter."""
