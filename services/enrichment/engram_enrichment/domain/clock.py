"""Times as the platform keeps them."""

from datetime import UTC, datetime


def as_utc(moment: datetime) -> datetime:
    """Producers may omit the zone; the platform's clock is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
