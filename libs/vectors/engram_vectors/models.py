"""The values that cross the VectorStore port."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Range:
    """Inclusive bounds on a payload number, or on a payload datetime compared as an instant.

    At least one bound; both numbers (int or float) or both timezone-aware datetimes.
    """

    gte: float | datetime | None = None
    lte: float | datetime | None = None


@dataclass(frozen=True)
class Exists:
    """Whether a field holds a value: present, not null and not an empty list (or the opposite)."""

    present: bool = True


FilterScalar: TypeAlias = str | int | float | bool
"""An equality filter value: type-strict, except that a float matches stored ints and floats
equal to it; a bool matches only stored booleans."""
FilterValue: TypeAlias = FilterScalar | Sequence[str | int] | Range | Exists
"""A value, a non-empty list of strings and ints (any of them), a Range, or Exists."""
PayloadFilter: TypeAlias = Mapping[str, FilterValue]
"""Keys are payload fields, or `parent.child` for one level of nesting; all must match."""
VectorLike: TypeAlias = Sequence[float] | npt.NDArray[np.floating[Any]]
Payload: TypeAlias = dict[str, Any]


@dataclass(frozen=True)
class SparseVector:
    """A lexical representation: term indices (unsigned 32-bit, unique) and their weights
    (positive, finite); no terms at all means no lexical representation."""

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
class Listed:
    """A point as a scroll returns it: the caller's id and the payload, no vectors."""

    id: str
    payload: Payload


@dataclass(frozen=True)
class HybridHit:
    """A hybrid-search candidate with both of its scores, whichever list it came from.

    `dense` is its cosine similarity to the query vector; `lexical` its IDF-weighted lexical
    score (0.0 when it shares no term with the query; None when no lexical query was given).
    The ranks (1-based) are its places in the engine's dense and lexical top-`limit` lists, None
    when it was not in that list.
    """

    id: str
    payload: Payload
    dense: float
    lexical: float | None
    dense_rank: int | None
    lexical_rank: int | None


@dataclass(frozen=True)
class CollectionInfo:
    """What a collection promises about its vectors: their width, their embedder, and the
    lexical encoder of its sparse vectors (None: the collection holds no lexical vectors)."""

    dimension: int
    fingerprint: str
    lexical: str | None = None
