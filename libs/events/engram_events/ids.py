"""Identifier and value types shared by every payload."""

from typing import Annotated

from pydantic import Field, StringConstraints

from engram_events.values import Scalar, Text

Id = Annotated[
    str,
    StringConstraints(min_length=1, max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$"),
]
"""An opaque id: printable, no whitespace, never a dict or list (filter values must be scalars)."""

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
AttributeName = Annotated[Text, StringConstraints(min_length=1, max_length=200)]
Attributes = dict[AttributeName, Scalar]
"""A record's attributes: any names (stored as name/value pairs), every value storable."""
Count = Annotated[int, Field(ge=0)]

__all__ = ["AttributeName", "Attributes", "Count", "Id", "Scalar", "Sha256"]
