"""Retry policy: exponential backoff with jitter, then the DLQ."""

import random
from dataclasses import dataclass

from pymongo.errors import ConnectionFailure


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
