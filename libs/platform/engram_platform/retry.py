"""Retry policy: exponential backoff with jitter, then the DLQ; and which failures no retry can
fix, so they skip the backoff that would hold the partition for nothing."""

import random
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bson.errors import BSONError
from pydantic import ValidationError
from pymongo.errors import BulkWriteError, ConnectionFailure, DuplicateKeyError, WriteError

from engram_events import PoisonMessage


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


class Failure(StrEnum):
    """What a handler's exception means for its input."""

    PERMANENT = "permanent"
    """The input itself can never be handled: dead-letter it now, without backoff."""
    OUTAGE = "outage"
    """The database is away: no fault of the input, so it is redelivered, never dead-lettered."""
    TRANSIENT = "transient"
    """Anything else: retried with backoff, dead-lettered when the attempts run out."""


DUPLICATE_KEY = 11000
PERMANENT_WRITE_CODES = frozenset(
    {
        2,  # BadValue: the local server's "invalid key" (a '.' in a key, a leading '$')
        9,  # FailedToParse
        14,  # TypeMismatch
        52,  # DollarPrefixedFieldName
        55,  # InvalidDBRef
        56,  # EmptyFieldName
        57,  # DottedFieldName
        121,  # DocumentValidationFailure
        10334,  # BSONObjectTooLarge
    }
)
"""Server write-error codes that the same document gets on every attempt."""


def failure_kind(exc: BaseException, *, attempt: int = 1) -> Failure:
    """Whether a failure is the input's for good, an outage, or worth another attempt.

    A duplicate key from a single write may be two upserts racing, which the next attempt
    wins, so it is permanent only from the second attempt on; in a bulk write the operation
    says whether it was an upsert.
    """
    if isinstance(exc, ConnectionFailure):
        return Failure.OUTAGE
    if isinstance(exc, PermanentError | PoisonMessage | ValidationError):
        return Failure.PERMANENT
    if isinstance(exc, BSONError | OverflowError | UnicodeEncodeError):
        return Failure.PERMANENT
    if isinstance(exc, DuplicateKeyError):
        return Failure.PERMANENT if attempt > 1 else Failure.TRANSIENT
    if isinstance(exc, BulkWriteError):
        return Failure.PERMANENT if _bulk_is_permanent(exc.details or {}) else Failure.TRANSIENT
    if isinstance(exc, WriteError):
        return Failure.PERMANENT if exc.code in PERMANENT_WRITE_CODES else Failure.TRANSIENT
    return Failure.TRANSIENT


def _bulk_is_permanent(details: Mapping[str, Any]) -> bool:
    """Every write error is one the same write gets again, and no write concern failed."""
    errors = details.get("writeErrors") or []
    if not errors or details.get("writeConcernErrors"):
        return False
    return all(_write_error_is_permanent(error) for error in errors)


def _write_error_is_permanent(error: dict[str, Any]) -> bool:
    """One bulk write error: a refused document, or a duplicate key no upsert raced for."""
    code = error.get("code")
    if code == DUPLICATE_KEY:
        op = error.get("op")
        return not (isinstance(op, dict) and "u" in op and op.get("upsert"))
    return code in PERMANENT_WRITE_CODES


def failure_reason(exc: BaseException) -> str:
    """Why an input failed, without its content: the error's type, the server's codes for a
    refused write, the count of invalid fields; a `PermanentError`'s own message (the code
    raising it words it without content)."""
    name = type(exc).__name__
    if isinstance(exc, PermanentError):
        return f"{name}: {str(exc)[:300]}" if str(exc) else name
    if isinstance(exc, BulkWriteError):
        codes = sorted({e.get("code") for e in (exc.details or {}).get("writeErrors") or []})
        return f"{name}: write error codes {', '.join(str(c) for c in codes)}"
    if isinstance(exc, WriteError):
        return f"{name}: write error code {exc.code}"
    if isinstance(exc, ValidationError):
        return f"{name}: {exc.error_count()} invalid fields"
    return name


def is_outage(exc: BaseException) -> bool:
    """The database is unreachable: no fault of the message, so redeliver it, never dead-letter."""
    return failure_kind(exc) is Failure.OUTAGE
