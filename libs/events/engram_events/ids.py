"""Identifier and value types shared by every payload."""

from typing import Annotated

from pydantic import Field, StringConstraints

Id = Annotated[
    str,
    StringConstraints(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$"),
]
"""An opaque id: printable, no whitespace, never a dict or list (filter values must be scalars)."""

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Scalar = str | int | float | bool | None
Attributes = dict[Annotated[str, StringConstraints(min_length=1, max_length=200)], Scalar]
Count = Annotated[int, Field(ge=0)]
