"""Writing a memory collection straight into the embedded engine, laid out by the memory
service's own writer (payload, lexical vector, payload indexes), so a bench can start the
service over 100k memories without sending each through the pipeline."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engram_memory.adapters.vectors import KEYWORD_INDEXES, MemoryVectors
from engram_memory.domain.rows import MemoryRow
from engram_vectors import QdrantEdgeStore

COLLECTION = "memories"
CHUNK = 2048


async def write_collection(
    directory: Path,
    rows: Sequence[MemoryRow],
    vectors: np.ndarray,
    provenance: Mapping[str, Any],
    *,
    lexical: bool = True,
    encoder: str | None = None,
) -> float:
    """Create the service's collection in `directory` (built with lexical `encoder` when given,
    else the current one) and write one active point per row; returns the seconds taken
    (optimisation included)."""
    started = time.perf_counter()
    store = QdrantEdgeStore(directory, keyword_indexes=KEYWORD_INDEXES)
    if lexical and encoder is not None:
        fingerprint = str(provenance["fingerprint"])
        await store.ensure_collection(COLLECTION, vectors.shape[1], fingerprint, lexical=encoder)
    memories = MemoryVectors(store, COLLECTION, lexical=lexical)
    await memories.open(vectors.shape[1], str(provenance["fingerprint"]))
    for start in range(0, len(rows), CHUNK):
        entries = [
            (rows[i], vectors[i], "active") for i in range(start, min(start + CHUNK, len(rows)))
        ]
        await memories.put_many(entries, provenance)
    await store.optimize(COLLECTION)
    await store.close()
    return time.perf_counter() - started
