"""The filter recall, listing and counting take: scope ids, a type, and metadata conditions.

Part of the public contract (the gateway validates it at the door, the memory service again).
A metadata condition is a scalar (equality) or an object with exactly one operator of `eq`,
`in`, `gte`, `lte`, `exists` (`gte` and `lte` may appear together as a range). Anything else —
unknown operators, `$`-prefixed names, nested objects, lists where a scalar belongs — is a
validation error naming the field.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
    model_validator,
)

from engram_events.ids import Id
from engram_events.payloads.memories import MemoryType
from engram_events.values import MetadataKey, Storable

MAX_METADATA_CONDITIONS = 20
MAX_IN_VALUES = 100

FilterString = Annotated[str, StringConstraints(min_length=1, max_length=256)]
MetadataScalar = Annotated[FilterString | StrictInt | StrictFloat | StrictBool, Storable]
"""Equality compares like types: a stored `true` never equals `1` or `"true"`; only values a
memory's metadata can hold (finite, 64-bit) are comparable."""
Bound = Annotated[StrictInt | StrictFloat | FilterString, Storable]
"""A range bound: a finite number, or an ISO-8601 timestamp (compared as an instant)."""
InValue = Annotated[FilterString | StrictInt, Storable]


def parse_instant(value: str) -> datetime | None:
    """An ISO-8601 date or timestamp as an aware instant (naive means UTC), else None."""
    if len(value) < 10 or not value[:4].isdigit():
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


class MetadataCondition(BaseModel):
    """One operator on one metadata key (`gte` and `lte` may share an object as a range)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    eq: MetadataScalar | None = None
    in_: list[InValue] | None = Field(
        default=None, alias="in", min_length=1, max_length=MAX_IN_VALUES
    )
    gte: Bound | None = None
    lte: Bound | None = None
    exists: StrictBool | None = None

    @model_validator(mode="after")
    def _one_operator(self) -> MetadataCondition:
        """Exactly one operator, a range of numbers or of timestamps, low bound first."""
        named = [
            name
            for name in ("eq", "in_", "gte", "lte", "exists")
            if getattr(self, name) is not None
        ]
        if not named:
            raise ValueError("give one operator: eq, in, gte, lte or exists")
        if len(named) > 1 and set(named) != {"gte", "lte"}:
            raise ValueError("give exactly one operator (only gte and lte may be combined)")
        low, high = self.bound("gte"), self.bound("lte")
        if low is None or high is None:
            return self
        if isinstance(low, datetime) and isinstance(high, datetime):
            ordered = low <= high
        elif not isinstance(low, datetime) and not isinstance(high, datetime):
            ordered = low <= high
        else:
            raise ValueError("gte and lte must both be numbers or both be timestamps")
        if not ordered:
            raise ValueError("gte must not be greater than lte")
        return self

    def bound(self, name: str) -> float | int | datetime | None:
        """A range bound as a number or an instant; a string that is no timestamp is refused."""
        value: float | int | str | None = getattr(self, name)
        if value is None or not isinstance(value, str):
            return value
        instant = parse_instant(value)
        if instant is None:
            raise ValueError(f"{name} must be a number or an ISO-8601 timestamp")
        return instant

    @property
    def is_time_range(self) -> bool:
        """Whether this is a range over timestamps (compared as instants, not as text)."""
        return isinstance(self.bound("gte") or self.bound("lte"), datetime)


MetadataFilter = dict[MetadataKey, MetadataScalar | MetadataCondition]


class MemoryFilter(BaseModel):
    """Which memories a recall, listing, count or scope clear considers; all conditions hold."""

    model_config = ConfigDict(extra="forbid")

    user_id: Id | None = None
    session_id: Id | None = None
    type: MemoryType | None = None
    metadata: MetadataFilter | None = Field(default=None, max_length=MAX_METADATA_CONDITIONS)

    def conditions(self) -> dict[str, MetadataCondition]:
        """Every metadata condition in operator form (a bare scalar means `eq`)."""
        return {
            key: value if isinstance(value, MetadataCondition) else MetadataCondition(eq=value)
            for key, value in (self.metadata or {}).items()
        }

    def is_empty(self) -> bool:
        """Whether it selects everything."""
        return not (self.user_id or self.session_id or self.type or self.metadata)


def metadata_instants(metadata: dict[str, Any] | None) -> dict[str, datetime]:
    """The metadata values that are timestamps, as instants: what time ranges compare."""
    found: dict[str, datetime] = {}
    for key, value in (metadata or {}).items():
        if isinstance(value, str):
            instant = parse_instant(value)
            if instant is not None:
                found[key] = instant
    return found
