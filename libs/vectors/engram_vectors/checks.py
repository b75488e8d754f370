"""Validation shared by every adapter, run before any engine call."""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engram_vectors.defaults import LEXICAL_VECTOR
from engram_vectors.errors import DimensionMismatch, InvalidPoint, InvalidQuery, VectorStoreError
from engram_vectors.ids import (
    ORIGINAL_ID_KEY,
    RESERVED_PAYLOAD_PREFIX,
    RESERVED_STRING_PREFIX,
    check_id,
    engine_id,
)
from engram_vectors.models import Payload, Point, SparseVector, VectorLike

UnitVector = npt.NDArray[np.float32]

COLLECTION_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MAX_TOP_K = 1000
MAX_TERM_INDEX = 2**32 - 1


@dataclass(frozen=True)
class PreparedSparse:
    """A validated lexical vector: unique term indices in ascending order and their weights."""

    indices: npt.NDArray[np.uint32]
    values: npt.NDArray[np.float32]

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    def as_model(self) -> SparseVector:
        """The port's value, as `get` returns it."""
        return SparseVector(
            indices=tuple(int(index) for index in self.indices),
            values=tuple(float(value) for value in self.values),
        )


@dataclass(frozen=True)
class PreparedPoint:
    """A validated point: caller id, engine UUID, unit vector, payload carrying the caller id,
    and its lexical vector (None when it has none, or no terms)."""

    original_id: str
    engine_id: uuid.UUID
    vector: UnitVector
    payload: Payload
    sparse: PreparedSparse | None = None


def check_collection_name(name: object) -> str:
    """Names double as directory names in the edge store, so keep them plain."""
    if not isinstance(name, str) or not COLLECTION_NAME_PATTERN.match(name):
        raise VectorStoreError("collection names are 1-64 chars of letters, digits, '_' and '-'")
    return name


def unit_vector(
    vector: VectorLike, dimension: int, collection: str, error: type[VectorStoreError]
) -> UnitVector:
    """A finite, non-zero vector of the collection's width, scaled to unit length."""
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as bad:
        raise error("vector must be a sequence of numbers") from bad
    if array.ndim != 1:
        raise error("vector must be one-dimensional")
    if array.shape[0] != dimension:
        raise DimensionMismatch(collection, dimension, int(array.shape[0]))
    if not np.all(np.isfinite(array)):
        raise error("vector has non-finite values")
    norm = float(np.linalg.norm(array))
    if norm == 0.0:
        raise error("vector has zero length; cosine similarity is undefined")
    return (array / norm).astype(np.float32)


def _has_reserved_string(value: object) -> bool:
    """Whether a JSON value holds, at any depth, a string under the reserved string prefix."""
    if isinstance(value, str):
        return value.startswith(RESERVED_STRING_PREFIX)
    if isinstance(value, list):
        return any(_has_reserved_string(item) for item in value)
    if isinstance(value, dict):
        return any(_has_reserved_string(item) for item in value.values())
    return False


def _numbers(raw: object, kinds: str, what: str, error: type[VectorStoreError]) -> npt.NDArray[Any]:
    """A flat array of numbers of the numpy `kinds` ("iu" integers, "iuf" numbers), no bools."""
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence | np.ndarray):
        raise error(f"sparse {what} must be a sequence of numbers")
    if any(isinstance(item, bool | np.bool_) for item in raw):
        raise error(f"sparse {what} must not hold booleans")
    array = np.asarray(raw) if len(raw) else np.empty(0, dtype=np.int64)
    if array.ndim != 1 or array.dtype.kind not in kinds:
        raise error(
            f"sparse {what} must be a flat sequence of {'integers' if kinds == 'iu' else 'numbers'}"
        )
    return array


def prepare_sparse(sparse: object, error: type[VectorStoreError]) -> PreparedSparse:
    """Unique unsigned 32-bit indices and positive finite weights, sorted by index.

    Weights are positive because Qdrant engines differ on a shared term whose weights cancel or
    are zero: the embedded one leaves a point scoring 0 out of the candidates, the client keeps it.
    """
    if not isinstance(sparse, SparseVector):
        raise error("sparse vectors must be engram_vectors.SparseVector values")
    indices = _numbers(sparse.indices, "iu", "indices", error)
    values = _numbers(sparse.values, "iuf", "values", error)
    if indices.shape != values.shape:
        raise error("sparse indices and values must have the same length")
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) > MAX_TERM_INDEX):
        raise error(f"sparse indices must lie within [0, {MAX_TERM_INDEX}]")
    if np.unique(indices).size != indices.size:
        raise error("sparse indices must be unique")
    weights = values.astype(np.float64)
    if not np.all(np.isfinite(weights)) or not np.all(weights > 0):
        raise error("sparse values must be positive and finite")
    order = np.argsort(indices, kind="stable")
    return PreparedSparse(
        indices=indices[order].astype(np.uint32), values=weights[order].astype(np.float32)
    )


def check_payload(payload: Mapping[str, Any]) -> Payload:
    """A JSON-only copy of the payload; reserved keys and reserved strings are refused."""
    if not isinstance(payload, Mapping):
        raise InvalidPoint("payload must be a mapping")
    for key in payload:
        if not isinstance(key, str) or not key:
            raise InvalidPoint("payload keys must be non-empty strings")
        if key.startswith(RESERVED_PAYLOAD_PREFIX):
            raise InvalidPoint(
                f"payload keys starting with {RESERVED_PAYLOAD_PREFIX!r} are reserved"
            )
    try:
        copied: Payload = json.loads(json.dumps(payload, allow_nan=False))
    except (TypeError, ValueError) as bad:
        raise InvalidPoint("payload must be JSON-serialisable without NaN or infinity") from bad
    if _has_reserved_string(copied):
        raise InvalidPoint("payload strings must not start with a reserved prefix")
    return copied


def _point_sparse(point: Point, lexical: bool, collection: str) -> PreparedSparse | None:
    """The point's lexical vector, None when it has no terms; refused on a non-lexical collection."""
    if point.sparse is None:
        return None
    if not lexical:
        raise InvalidPoint(f"collection {collection!r} holds no lexical vectors")
    sparse = prepare_sparse(point.sparse, InvalidPoint)
    return sparse if len(sparse) else None


def prepare_points(
    points: Sequence[Point], dimension: int, collection: str, *, lexical: bool = False
) -> list[PreparedPoint]:
    """Validate a batch; a repeated id keeps its last occurrence, as a sequential upsert would."""
    prepared: dict[str, PreparedPoint] = {}
    for point in points:
        if not isinstance(point, Point):
            raise InvalidPoint("upsert takes engram_vectors.Point values")
        original = check_id(point.id)
        payload = check_payload(point.payload)
        payload[ORIGINAL_ID_KEY] = original
        prepared.pop(original, None)
        prepared[original] = PreparedPoint(
            original_id=original,
            engine_id=engine_id(original),
            vector=unit_vector(point.vector, dimension, collection, InvalidPoint),
            payload=payload,
            sparse=_point_sparse(point, lexical, collection),
        )
    return list(prepared.values())


def check_top_k(top_k: object, what: str = "top_k") -> int:
    """A positive integer no larger than MAX_TOP_K."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise InvalidQuery(f"{what} must be an integer within [1, {MAX_TOP_K}]")
    return top_k


def check_threshold(score_threshold: object) -> float | None:
    """None, or a finite number: the lowest cosine similarity a hit may have."""
    if score_threshold is None:
        return None
    if isinstance(score_threshold, bool) or not isinstance(score_threshold, int | float):
        raise InvalidQuery("score_threshold must be a number or None")
    if not math.isfinite(score_threshold):
        raise InvalidQuery("score_threshold must be finite")
    return float(score_threshold)


def split_payload(stored: Mapping[str, Any] | None, fallback_id: str) -> tuple[str, Payload]:
    """The caller's id and the caller's payload, with the reserved keys removed."""
    payload = dict(stored or {})
    original = payload.pop(ORIGINAL_ID_KEY, None)
    for key in [key for key in payload if key.startswith(RESERVED_PAYLOAD_PREFIX)]:
        payload.pop(key)
    return (original if isinstance(original, str) else fallback_id), payload


def record_vectors(stored: Any) -> tuple[UnitVector, SparseVector | None]:
    """A Qdrant record's dense and lexical vectors: engines give a bare list when a point has
    only its unnamed dense vector, a dict by name otherwise."""
    named = stored if isinstance(stored, dict) else {"": stored}
    sparse = named.get(LEXICAL_VECTOR)
    lexical = None
    if sparse is not None:
        lexical = PreparedSparse(
            indices=np.asarray(sparse.indices, dtype=np.uint32),
            values=np.asarray(sparse.values, dtype=np.float32),
        ).as_model()
    return np.asarray(named[""], dtype=np.float32), lexical
