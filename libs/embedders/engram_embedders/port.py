"""The Embedder port every implementation satisfies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram_embedders.provenance import Embeddings, Provenance


class Embedder(Protocol):
    """Turns texts into unit vectors and says which vector space they belong to.

    Documents and queries are separate calls because some models (bge) are trained with an
    instruction in front of queries only. Not runtime-checkable on purpose: isinstance() would
    read `provenance`, which loads a local model and raises for a remote embedder that has not
    answered yet.
    """

    @property
    def provenance(self) -> Provenance:
        """The provenance every vector from this embedder carries."""
        ...

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Embed documents (what is stored); invalid input raises InvalidEmbeddingInput first."""
        ...

    async def embed_queries(self, texts: Sequence[str]) -> Embeddings:
        """Embed search queries into the same space; asymmetric models add their instruction."""
        ...

    async def aclose(self) -> None:
        """Release threads, sessions or connections held by the embedder."""
        ...
