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


class LexicalMismatch(VectorStoreError, ValueError):
    """The collection's lexical encoder (or its having none) differs from the one asked for."""

    def __init__(self, collection: str, stored: str | None, asked: str | None) -> None:
        self.collection = collection
        self.stored = stored
        self.asked = asked
        super().__init__(
            f"collection {collection!r} holds {_holding(stored)}; this service encodes "
            f"{_holding(asked)}"
        )


def _holding(lexical: str | None) -> str:
    """What a collection with this lexical encoder id holds, for a message."""
    return "no lexical vectors" if lexical is None else f"lexical vectors of encoder {lexical!r}"


class InvalidFilter(VectorStoreError, ValueError):
    """A filter outside the forms filters.py documents (keys, values, ranges, Exists)."""


class InvalidPoint(VectorStoreError, ValueError):
    """A point with a bad id, vector, sparse vector or payload."""


class InvalidQuery(VectorStoreError, ValueError):
    """A search with a bad vector, sparse vector, top_k/limit or score threshold, or a lexical
    query on a collection without lexical vectors."""


class StoreUnavailable(VectorStoreError):
    """The engine could not open or reach its storage (e.g. another process holds the shard)."""
