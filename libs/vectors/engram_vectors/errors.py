"""Typed failures of the vector stores, so callers can tell misuse from engine trouble."""

from __future__ import annotations


class VectorStoreError(Exception):
    """Base of every failure raised by a vector store."""


class CollectionNotFound(VectorStoreError, LookupError):
    """The collection was never ensured in this store."""


class DimensionMismatch(VectorStoreError, ValueError):
    """A vector's width differs from the collection's; comparing them would be meaningless."""

    def __init__(self, collection: str, expected: int, got: int) -> None:
        self.collection = collection
        self.expected = expected
        self.got = got
        super().__init__(f"collection {collection!r} holds {expected}-d vectors, got {got}-d")


class FingerprintMismatch(VectorStoreError, ValueError):
    """The embedder's fingerprint differs from the collection's: a different vector space."""

    def __init__(self, collection: str, expected: str, got: str) -> None:
        self.collection = collection
        self.expected = expected
        self.got = got
        super().__init__(
            f"collection {collection!r} holds vectors of embedder {expected[:16]}…, "
            f"refusing vectors of embedder {got[:16]}…"
        )


class InvalidFilter(VectorStoreError, ValueError):
    """A filter that is not a flat mapping of payload keys to strings, ints, or lists of them."""


class InvalidPoint(VectorStoreError, ValueError):
    """A point with a bad id, vector or payload."""


class InvalidQuery(VectorStoreError, ValueError):
    """A search with a bad vector, top_k or score threshold."""


class StoreUnavailable(VectorStoreError):
    """The engine could not open or reach its storage (e.g. another process holds the shard)."""
