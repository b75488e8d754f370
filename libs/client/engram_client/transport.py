"""What the sync and async clients share: building the request, reading the answer, pacing retries."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import httpx

from engram_client.calls import Call
from engram_client.errors import (
    ConnectionFailed,
    Unauthorized,
    error_from_response,
    parse_retry_after,
)
from engram_client.retry import RetryPolicy, should_retry_exception, should_retry_status

log = logging.getLogger("engram_client")
T = TypeVar("T")
USER_AGENT = "engram-client/0.1"


def request_args(call: Call[Any], api_key: str | None) -> dict[str, Any]:
    """Keyword arguments for `httpx.Client.request`; the key goes only into the header."""
    headers = {"Accept": "application/json, application/problem+json", **call.headers}
    if call.authenticated:
        if not api_key:
            raise Unauthorized(
                "no API key configured: set ENGRAM_API_KEY (or pass api_key=), "
                "or run `make run` so .engram/run.env exists",
                type="/problems/client-no-api-key",
            )
        headers["Authorization"] = f"Bearer {api_key}"
    args: dict[str, Any] = {"method": call.method, "url": call.path, "headers": headers}
    if call.params:
        args["params"] = dict(call.params)
    if call.files is not None:
        args["files"] = call.files
        args["data"] = call.data or {}
    elif call.data is not None:
        args["data"] = call.data
    elif call.json is not None:
        args["json"] = call.json
    return args


def read_answer(call: Call[T], response: httpx.Response) -> T:
    """Parse a 2xx body (None for 204 / empty) or raise the typed error."""
    if not response.is_success:
        raise error_from_response(response)
    body = response.json() if response.content else None
    return call.parse(body)


def retry_delay_after_exception(
    call: Call[Any], exc: httpx.TransportError, attempt: int, policy: RetryPolicy
) -> float:
    """Seconds to wait before the next attempt, or raise ConnectionFailed when it must stop."""
    if attempt < policy.max_attempts and should_retry_exception(exc, call.retry_safe):
        delay = policy.delay(attempt)
        log.debug(
            "retrying after transport error",
            extra={"method": call.method, "attempt": attempt, "error_type": type(exc).__name__},
        )
        return delay
    raise ConnectionFailed(
        f"{call.method} {call.path} failed without an answer ({type(exc).__name__}) "
        f"after {attempt} attempt(s); is the gateway running at the configured URL?",
        type="/problems/client-connection-failed",
        title="Connection failed",
    ) from exc


def retry_delay_after_status(
    call: Call[Any], response: httpx.Response, attempt: int, policy: RetryPolicy
) -> float | None:
    """Seconds to wait before retrying this answer, or None when it is final."""
    if response.is_success:
        return None
    if attempt < policy.max_attempts and should_retry_status(response.status_code, call.retry_safe):
        log.debug(
            "retrying after status",
            extra={"method": call.method, "attempt": attempt, "status": response.status_code},
        )
        return policy.delay(attempt, parse_retry_after(response.headers.get("retry-after")))
    return None
