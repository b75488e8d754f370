"""The Embedder port every implementation satisfies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engram_embedders.provenance import Embeddings, Provenance


class Embedder(Protocol):
    """Turns texts into unit vectors and says which vector space they belong to.

    Not runtime-checkable on purpose: isinstance() would read `provenance`, which loads MiniLM
    and raises for a remote embedder that has not answered yet.
    """

    @property
    def provenance(self) -> Provenance:
        """The provenance every vector from this embedder carries."""
        ...

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Embed a batch; invalid input raises InvalidEmbeddingInput before any model work."""
        ...

    async def aclose(self) -> None:
        """Release threads, sessions or connections held by the embedder."""
        ...
