"""Fixtures that build each VectorStore adapter in a fresh place and close it afterwards."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
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


@pytest.fixture
def store_dir(tmp_path: Path) -> Iterator[Path]:
    """Where this test's stores keep their files: memory-backed where the machine has /dev/shm,
    since on disk the edge shard's fsyncs cost ~0.5 s per store opened (its payload indexes),
    and durability across a power cut is not what these contract tests check."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    directory = Path(tempfile.mkdtemp(prefix="engram-store-", dir=shm))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(params=ADAPTERS)
async def store(request: pytest.FixtureRequest, store_dir: Path) -> AsyncIterator[VectorStore]:
    """Each contract test runs once per adapter."""
    built = build_store(request.param, store_dir)
    yield built
    await built.close()


@pytest.fixture
def store_factory(store_dir: Path) -> Callable[[str], VectorStore]:
    """Build stores by kind in this test's store dir (for reopen tests; the test closes them)."""
    return lambda kind: build_store(kind, store_dir)
