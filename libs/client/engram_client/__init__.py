"""Engram's Python client: typed sync and async access to the public HTTP API."""

from engram_client.async_client import AsyncEngramClient
from engram_client.calls import Call, new_idempotency_key
from engram_client.errors import (
    BadRequest,
    Conflict,
    ConnectionFailed,
    EngramError,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    QuotaExceeded,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
    WaitTimeout,
)
from engram_client.retry import NO_RETRY, RetryPolicy
from engram_client.settings import Connection, resolve_connection
from engram_client.sync_client import EngramClient

__all__ = [
    "NO_RETRY",
    "AsyncEngramClient",
    "BadRequest",
    "Call",
    "Conflict",
    "Connection",
    "ConnectionFailed",
    "EngramClient",
    "EngramError",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "QuotaExceeded",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "ServiceUnavailable",
    "Unauthorized",
    "UnsupportedMediaType",
    "ValidationFailed",
    "WaitTimeout",
    "new_idempotency_key",
    "resolve_connection",
]
