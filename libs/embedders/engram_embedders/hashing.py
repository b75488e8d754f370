"""A deterministic feature-hashing embedder: no model files, same text gives the same vector."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from engram_embedders.normalize import l2_normalize_rows
from engram_embedders.provenance import Embeddings, FloatMatrix, Provenance
from engram_embedders.validation import validate_texts

HASHING_PROVIDER = "engram"
HASHING_ALGORITHM = "engram-hashing-v1"
_WORD = re.compile(r"\w+")
_HASH_KEY = HASHING_ALGORITHM.encode("ascii")


@lru_cache(maxsize=65536)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    """Index and sign of a feature from a keyed blake2b digest (stable across processes)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, key=_HASH_KEY).digest()
    value = int.from_bytes(digest, "big")
    return value % dimension, 1.0 if value >> 63 else -1.0


def _trigrams(token: str) -> list[str]:
    """Character trigrams of a token padded with boundary marks, so 'cat' and 'cats' overlap."""
    padded = f"#{token}#"
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


class HashingEmbedder:
    """Lowercase word unigrams plus character trigrams, signed-hashed into `dimension` buckets."""

    def __init__(self, dimension: int = 384, trigram_weight: float = 0.5) -> None:
        if dimension < 2:
            raise ValueError("dimension must be at least 2")
        if not 0.0 <= trigram_weight <= 1.0:
            raise ValueError("trigram_weight must be within [0, 1]")
        self._dimension = dimension
        self._trigram_weight = trigram_weight
        self._provenance = Provenance(
            provider=HASHING_PROVIDER,
            model_id=f"{HASHING_ALGORITHM}-{dimension}",
            weights_sha256=self._parameters_digest(),
            dimension=dimension,
            normalized=True,
            precision="fp32",
        )

    def _parameters_digest(self) -> str:
        """The hashing embedder's 'weights' are its parameters; their digest stands in for them."""
        parameters = {
            "algorithm": HASHING_ALGORITHM,
            "dimension": self._dimension,
            "trigram_weight": self._trigram_weight,
            "token_pattern": _WORD.pattern,
        }
        canonical = json.dumps(parameters, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def provenance(self) -> Provenance:
        """Provenance derived from this instance's own parameters."""
        return self._provenance

    def _features(self, text: str) -> list[tuple[str, float]]:
        """Weighted features of one text; falls back to raw-text trigrams when it has no words."""
        lowered = text.lower()
        words = _WORD.findall(lowered)
        if not words:
            return [(f"c:{gram}", 1.0) for gram in _trigrams(lowered.strip())]
        features = [(f"w:{word}", 1.0) for word in words]
        if self._trigram_weight > 0:
            for word in words:
                grams = _trigrams(word)
                features.extend((f"c:{gram}", self._trigram_weight) for gram in grams)
        return features

    def _embed_one(self, text: str, row: FloatMatrix, index: int) -> None:
        """Accumulate one text's signed features into its row."""
        for feature, weight in self._features(text):
            bucket, sign = _bucket(feature, self._dimension)
            row[index, bucket] += sign * weight
        if not np.any(row[index]):
            row[index, _bucket("\x00fallback", self._dimension)[0]] = 1.0

    def embed_sync(self, texts: Sequence[str]) -> Embeddings:
        """Embed in the calling thread; validation first."""
        checked = validate_texts(texts)
        matrix = np.zeros((len(checked), self._dimension), dtype=np.float32)
        for index, text in enumerate(checked):
            self._embed_one(text, matrix, index)
        return Embeddings(vectors=l2_normalize_rows(matrix), provenance=self._provenance)

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Embed inline: hashing is cheap enough not to need a worker thread."""
        return self.embed_sync(texts)

    async def embed_queries(self, texts: Sequence[str]) -> Embeddings:
        """Queries hash exactly as documents do: the model is symmetric."""
        return self.embed_sync(texts)

    async def aclose(self) -> None:
        """Nothing to release."""
