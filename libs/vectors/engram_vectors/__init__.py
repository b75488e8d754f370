"""A VectorStore port for cosine and hybrid (dense + lexical, IDF-weighted) search, with
embedded-Qdrant, qdrant-client and numpy adapters.

The two Qdrant adapters are imported on first use: qdrant-client alone takes half a second.
"""

from typing import TYPE_CHECKING, Any

from engram_vectors.base import BaseVectorStore
from engram_vectors.errors import (
    CollectionNotFound,
    DimensionMismatch,
    FingerprintMismatch,
    InvalidFilter,
    InvalidPoint,
    InvalidQuery,
    LexicalMismatch,
    StoreUnavailable,
    VectorStoreError,
)
from engram_vectors.factory import VectorStoreKind, make_vector_store, vector_store_from
from engram_vectors.ids import engine_id
from engram_vectors.instrumented import VECTOR_QUERY_DURATION, InstrumentedVectorStore
from engram_vectors.models import (
    CollectionInfo,
    Exists,
    FilterScalar,
    FilterValue,
    Hit,
    HybridHit,
    Listed,
    PayloadFilter,
    Point,
    Range,
    SparseVector,
)
from engram_vectors.numpy_store import ExactNumpyStore
from engram_vectors.port import VectorStore

if TYPE_CHECKING:
    from engram_vectors.client_store import QdrantClientStore
    from engram_vectors.edge_store import QdrantEdgeStore

__all__ = [
    "VECTOR_QUERY_DURATION",
    "BaseVectorStore",
    "CollectionInfo",
    "CollectionNotFound",
    "DimensionMismatch",
    "ExactNumpyStore",
    "Exists",
    "FilterScalar",
    "FilterValue",
    "FingerprintMismatch",
    "Hit",
    "HybridHit",
    "InstrumentedVectorStore",
    "InvalidFilter",
    "InvalidPoint",
    "InvalidQuery",
    "LexicalMismatch",
    "Listed",
    "PayloadFilter",
    "Point",
    "QdrantClientStore",
    "QdrantEdgeStore",
    "Range",
    "SparseVector",
    "StoreUnavailable",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreKind",
    "engine_id",
    "make_vector_store",
    "vector_store_from",
]


def __getattr__(name: str) -> Any:
    """Import an engine adapter only when it is asked for."""
    if name == "QdrantClientStore":
        from engram_vectors.client_store import QdrantClientStore

        return QdrantClientStore
    if name == "QdrantEdgeStore":
        from engram_vectors.edge_store import QdrantEdgeStore

        return QdrantEdgeStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
