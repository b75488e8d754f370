"""Row-wise L2 normalisation shared by every embedder."""

from __future__ import annotations

import numpy as np

from engram_embedders.provenance import FloatMatrix


def l2_normalize_rows(matrix: FloatMatrix) -> FloatMatrix:
    """Scale each row to unit length so dot product equals cosine similarity."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if np.any(norms == 0) or not np.all(np.isfinite(norms)):
        raise ValueError("cannot normalise a zero or non-finite vector")
    normalized: FloatMatrix = (matrix / norms).astype(np.float32, copy=False)
    return normalized
