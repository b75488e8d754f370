"""A row's valid period from the fields its type declares: dates read strictly, in UTC."""

from __future__ import annotations

from datetime import UTC, date, datetime

from engram_events.ids import Scalar
from engram_extraction.domain.schema import RecordSchema

Period = tuple[datetime | None, datetime | None]


def instant(value: Scalar) -> datetime | None:
    """An ISO date (midnight UTC) or date-time (naive means UTC); None when it is neither."""
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), tzinfo=UTC)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def period_of(attributes: dict[str, Scalar], schema: RecordSchema | None) -> tuple[Period, str]:
    """(valid_from, valid_to) from the declared fields (None where a field is absent or empty),
    or a problem naming the field whose value is not a date, or an end not after the start."""
    if schema is None:
        return (None, None), ""
    bounds: list[datetime | None] = []
    for name in (schema.valid_from_field, schema.valid_to_field):
        value = attributes.get(name) if name is not None else None
        if name is None or value is None or value == "":
            bounds.append(None)
            continue
        parsed = instant(value)
        if parsed is None:
            return (None, None), f"field {name[:50]!r} is not an ISO date or date-time"
        bounds.append(parsed)
    start, end = bounds
    if start is not None and end is not None and end <= start:
        return (None, None), "the valid period ends before it starts"
    return (start, end), ""
