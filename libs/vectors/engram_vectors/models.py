"""The values that cross the VectorStore port."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

FilterScalar: TypeAlias = str | int
"""Filter values: strings and integers only (booleans and floats are refused, see filters.py)."""
FilterValue: TypeAlias = FilterScalar | Sequence[FilterScalar]
PayloadFilter: TypeAlias = Mapping[str, FilterValue]
VectorLike: TypeAlias = Sequence[float] | npt.NDArray[np.floating[Any]]
Payload: TypeAlias = dict[str, Any]


@dataclass(frozen=True)
class SparseVector:
    """A lexical representation: term indices (unsigned 32-bit, unique) and their weights."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class Point:
    """A vector with the caller's id and a JSON payload (stored vectors come back unit-length);
    `sparse` is its lexical representation, for collections created with one."""

    id: str
    vector: VectorLike
    payload: Payload = field(default_factory=dict)
    sparse: SparseVector | None = None


@dataclass(frozen=True)
class Hit:
    """A search result: the caller's id, the cosine similarity, and the payload."""

    id: str
    score: float
    payload: Payload


@dataclass(frozen=True)
class CollectionInfo:
    """What a collection promises about its vectors: their width and their embedder."""

    dimension: int
    fingerprint: str
