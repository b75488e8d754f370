"""Retry policy: exponential backoff with jitter, then the DLQ."""

import random
from dataclasses import dataclass

from pymongo.errors import BulkWriteError, ConnectionFailure, WriteError


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a message gets and how long to wait between them."""

    max_attempts: int = 5
    base_seconds: float = 0.2
    max_seconds: float = 5.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based); full jitter."""
        ceiling = min(self.max_seconds, self.base_seconds * (2 ** (attempt - 1)))
        return (rng or random).uniform(ceiling / 2, ceiling)


class PermanentError(Exception):
    """A handler failure no retry can fix; dead-letter it at once with this reason."""


def is_outage(exc: BaseException) -> bool:
    """The database is unreachable: no fault of the message, so redeliver it, never dead-letter."""
    return isinstance(exc, ConnectionFailure)


REFUSED_DOCUMENT_CODES = frozenset({2, 52, 55, 57, 121})
"""Server codes for a document it will never store as written: BadValue (a key with a dot, on
the local server), DollarPrefixedFieldName, InvalidDBRef, DottedFieldName, validation."""


def is_refused_document(exc: BaseException) -> bool:
    """The database answered that this input's document is invalid (alone, or every one a bulk
    write refused): the same write fails on every attempt, so retrying it only holds up the
    inputs behind it."""
    if isinstance(exc, BulkWriteError):
        errors = exc.details.get("writeErrors") or []
        return bool(errors) and all(e.get("code") in REFUSED_DOCUMENT_CODES for e in errors)
    return isinstance(exc, WriteError) and exc.code in REFUSED_DOCUMENT_CODES
