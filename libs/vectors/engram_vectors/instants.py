"""Stored datetime strings read as Qdrant reads them, so the numpy adapter's ranges agree.

Qdrant takes RFC 3339 and relaxations of it: whitespace for the `T`, lowercase `t`/`z`, one-digit
fields, no seconds (then no offset), a date alone, an offset of `+HH`, `+HHMM` or `+HH:MM`
(optionally after whitespace), `UTC`, and digits past microseconds (cut here, which only matters
within a microsecond). A value without an offset is UTC. Checked against both engines on ~6,000
variants: this reader agrees wherever they agree with each other. Where they disagree (a trailing
space, a leap second, a signed year, a lowercase `utc`, a lowercase `t` without an offset) it
sides with one of them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_INSTANT = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})"
    r"(?:(?:[Tt]|\s+)(?P<hour>\d{1,2}):(?P<minute>\d{1,2})"
    r"(?::(?P<second>\d{1,2})(?:\.(?P<fraction>\d+))?"
    r"(?P<offset>\s*(?:[Zz]|UTC|[+-]\d{2}(?::?\d{2})?))?)?)?"
)


def _offset(text: str | None) -> timezone:
    """The zone an offset suffix names; none at all means UTC."""
    if text is None:
        return UTC
    text = text.strip()
    if text in ("Z", "z", "UTC"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + (int(digits[2:]) if len(digits) > 2 else 0)
    return timezone(sign * timedelta(minutes=minutes))


def parse_instant(text: str) -> datetime | None:
    """The timezone-aware instant a stored string names, or None when it is not a datetime."""
    found = _INSTANT.fullmatch(text.lstrip())
    if found is None:
        return None
    part = found.groupdict()
    try:
        return datetime(
            int(part["year"]),
            int(part["month"]),
            int(part["day"]),
            int(part["hour"] or 0),
            int(part["minute"] or 0),
            int(part["second"] or 0),
            int((part["fraction"] or "0")[:6].ljust(6, "0")),
            tzinfo=_offset(part["offset"]),
        )
    except ValueError:
        return None
