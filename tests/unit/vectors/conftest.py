"""Fixtures that build each VectorStore adapter in a fresh place and close it afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from engram_vectors import (
    ExactNumpyStore,
    QdrantClientStore,
    QdrantEdgeStore,
    VectorStore,
    make_vector_store,
)

ADAPTERS = ("numpy", "edge", "qdrant-memory", "instrumented-numpy")


def build_store(kind: str, directory: Path) -> VectorStore:
    """A new, empty store of `kind`, keeping its files (if any) under `directory`."""
    if kind == "numpy":
        return ExactNumpyStore()
    if kind == "instrumented-numpy":
        return make_vector_store("numpy")
    if kind == "edge":
        return QdrantEdgeStore(directory / "edge")
    if kind == "qdrant-memory":
        return QdrantClientStore(location=":memory:")
    if kind == "qdrant-path":
        return QdrantClientStore(path=str(directory / "qdrant-local"))
    raise ValueError(kind)


@pytest.fixture(params=ADAPTERS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VectorStore]:
    """Each contract test runs once per adapter."""
    built = build_store(request.param, tmp_path)
    yield built
    await built.close()


@pytest.fixture
def store_factory(tmp_path: Path) -> Callable[[str], VectorStore]:
    """Build stores by kind in this test's tmp dir (for reopen tests; the test closes them)."""
    return lambda kind: build_store(kind, tmp_path)
