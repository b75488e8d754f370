"""What a stored value may be: only what JSON, BSON and every consumer hold as it was given.

The gateway validates requests with these types and the services store payloads of the same
types, so anything storage could not hold faithfully is a 422 naming the field at the door,
never an accepted write that a consumer later fails on or silently changes:

- numbers are finite (no NaN or ±Infinity, which JSON cannot carry and a JSON parser turns
  `1e400` into) and integers fit in signed 64 bits (BSON's widest integer);
- text is valid Unicode (a lone surrogate from a `\\ud800` escape cannot be encoded as UTF-8);
- metadata keys are plain names, `[A-Za-z0-9_-]{1,64}`: a `.` would be read as a path and a
  leading `$` as an operator by the database, and recall filters name keys by this grammar;
- metadata is flat (scalar values only) and bounded in keys and value length.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
METADATA_KEY_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
MAX_METADATA_KEYS = 256
MAX_METADATA_VALUE_CHARS = 64_000


def value_problem(value: object) -> str | None:
    """Why storage could not hold this scalar as given, or None when it can."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return None if INT64_MIN <= value <= INT64_MAX else "int64_overflow"
    if isinstance(value, float):
        return None if math.isfinite(value) else "non_finite_number"
    if isinstance(value, str):
        return None if _encodable(value) else "invalid_unicode"
    return None


VALUE_PROBLEMS = {
    "int64_overflow": "integers must fit in signed 64 bits",
    "non_finite_number": "numbers must be finite (no NaN or Infinity)",
    "invalid_unicode": "text must be valid Unicode (no lone surrogates)",
}
"""Each reason `value_problem` gives, as the sentence a 422 or a rejected row carries."""


def _encodable(text: str) -> bool:
    """Whether the text encodes as UTF-8 (it cannot hold a lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _storable(value: Any) -> Any:
    """Refuse a value storage would not keep as given, before a union may convert it."""
    problem = value_problem(value)
    if problem is not None:
        raise PydanticCustomError(problem, VALUE_PROBLEMS[problem])
    return value


def _valid_text(value: str) -> str:
    """Refuse text that cannot be encoded (see `Text`)."""
    if not _encodable(value):
        raise PydanticCustomError("invalid_unicode", VALUE_PROBLEMS["invalid_unicode"])
    return value


Storable = BeforeValidator(_storable)
"""Attach to a scalar type (or a union of them): non-finite numbers, integers beyond 64 bits
and unencodable text are refused with a stable error type."""

Text = Annotated[str, AfterValidator(_valid_text)]
"""Free text that can be encoded, stored and sent on (no lone surrogates)."""

Scalar = Annotated[str | int | float | bool | None, Storable]
"""One stored value: text, a 64-bit integer, a finite number, a boolean or null."""

MetadataKey = Annotated[str, StringConstraints(pattern=METADATA_KEY_PATTERN)]
"""A metadata key: a plain name (no dots, no `$`, no NUL), so a key is never a path or an
operator, and filters can name it."""

MetadataValue = Annotated[
    Annotated[str, StringConstraints(max_length=MAX_METADATA_VALUE_CHARS)]
    | int
    | float
    | bool
    | None,
    Storable,
]

Metadata = Annotated[dict[MetadataKey, MetadataValue], Field(max_length=MAX_METADATA_KEYS)]
"""A memory's or conversation's metadata: flat, named by plain keys, every value storable."""
