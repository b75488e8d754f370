"""Where a vector came from, as reported by the embedder that made it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, computed_field

FloatMatrix = npt.NDArray[np.float32]

_FINGERPRINT_VERSION = "engram-fp-v1"


class Provenance(BaseModel):
    """The identity of a vector space: who embedded, with which weights, into what shape."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    provider: str = Field(min_length=1)
    model_id: str = Field(min_length=1)
    weights_sha256: str = Field(min_length=1)
    dimension: int = Field(gt=0)
    normalized: bool
    precision: str = Field(min_length=1)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fingerprint(self) -> str:
        """A stable hash of what decides the vector space; unequal means incomparable vectors."""
        parts = (
            _FINGERPRINT_VERSION,
            self.provider,
            self.model_id,
            self.weights_sha256,
            str(self.dimension),
            "normalized" if self.normalized else "raw",
        )
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Embeddings:
    """Vectors (one row per input text, float32) and the provenance of the space they live in."""

    vectors: FloatMatrix
    provenance: Provenance

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[1] != self.provenance.dimension:
            raise ValueError("vectors do not match the provenance dimension")
        if self.vectors.dtype != np.float32:
            raise ValueError("vectors must be float32")

    def __len__(self) -> int:
        return int(self.vectors.shape[0])
