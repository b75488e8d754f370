"""One place that turns a configured kind into a vector store."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import SecretStr

from engram_vectors.instrumented import InstrumentedVectorStore
from engram_vectors.numpy_store import ExactNumpyStore
from engram_vectors.port import VectorStore

VectorStoreKind = Literal["edge", "qdrant", "numpy"]


def make_vector_store(kind: VectorStoreKind, **options: Any) -> VectorStore:
    """Build a store of `kind`, traced and timed; options are that adapter's keyword arguments."""
    return InstrumentedVectorStore(
        _adapter(kind, **options), system="numpy" if kind == "numpy" else "qdrant"
    )


def vector_store_from(
    qdrant_url: str | None,
    vector_path: str,
    *,
    api_key: SecretStr | None = None,
    **options: Any,
) -> VectorStore:
    """A Qdrant server when `qdrant_url` is set (with its API key, if any), else the embedded
    engine under `vector_path`, which needs no key."""
    if qdrant_url:
        return make_vector_store("qdrant", url=qdrant_url, api_key=api_key, **options)
    return make_vector_store("edge", root=vector_path, **options)


def _adapter(kind: VectorStoreKind, **options: Any) -> VectorStore:
    """The bare engine adapter of `kind`."""
    if kind == "edge":
        from engram_vectors.edge_store import QdrantEdgeStore

        return QdrantEdgeStore(**options)
    if kind == "qdrant":
        from engram_vectors.client_store import QdrantClientStore

        return QdrantClientStore(**options)
    if kind == "numpy":
        return ExactNumpyStore(**options)
    raise ValueError(f"unknown vector store kind: {kind!r}")
