"""Problem+json answers raised as typed exceptions, so callers branch on class, not on text."""

from __future__ import annotations

from typing import Any

import httpx


class EngramError(Exception):
    """Any failure the client reports; `status` is None when no HTTP answer arrived."""

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        type: str = "about:blank",
        title: str = "",
        errors: list[dict[str, Any]] | None = None,
        instance: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(detail or title or type)
        self.status = status
        self.type = type
        self.title = title
        self.detail = detail
        self.errors = errors or []
        self.instance = instance
        self.retry_after = retry_after

    @property
    def kind(self) -> str:
        """The stable suffix of `type` (`/problems/not-found` → `not-found`)."""
        return self.type.rstrip("/").rsplit("/", 1)[-1]

    def __str__(self) -> str:
        head = f"{self.status} {self.kind}" if self.status is not None else self.kind
        return f"{head}: {self.detail or self.title}"


class BadRequest(EngramError):
    """400: the request could not be understood."""


class Unauthorized(EngramError):
    """401: the API key is missing or not valid."""


class Forbidden(EngramError):
    """403: the key is valid but may not do this."""


class QuotaExceeded(Forbidden):
    """403 `quota-exceeded`: the write would overrun one of the tenant's storage quotas; `quota`
    names it (`memories`, `documents`, `document_bytes`) with its `limit`, what is `used` and
    what the write `requested`."""

    quota: str = ""
    limit: int | None = None
    used: int | None = None
    requested: int | None = None


class NotFound(EngramError):
    """404: no such resource for this tenant (another tenant's ids are 404 too)."""


class Conflict(EngramError):
    """409: the resource is in a state that refuses this change (e.g. already deleted)."""

    superseded_by: str | None = None
    """For a memory edit: the newer version to edit instead (the one that won, or replaced it)."""
    duplicate_of: str | None = None
    """For a memory edit: the live memory that already says the new content."""


class PayloadTooLarge(EngramError):
    """413: the body exceeds the gateway's limit."""


class UnsupportedMediaType(EngramError):
    """415: the content type or document mime is not accepted."""


class ValidationFailed(EngramError):
    """422: the input is invalid; `errors` says where and why."""


class RateLimited(EngramError):
    """429: too many requests; `retry_after` says how long to wait."""


class ServerError(EngramError):
    """5xx other than 503: a fault on the platform's side."""


class ServiceUnavailable(ServerError):
    """503: a dependency (broker, owning service) is down; retry later."""


class ConnectionFailed(EngramError):
    """No HTTP answer: the gateway could not be reached or the connection broke."""


class WaitTimeout(EngramError):
    """A wait helper gave up before the resource reached a final state."""


_BY_STATUS: dict[int, type[EngramError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: ValidationFailed,
    429: RateLimited,
    503: ServiceUnavailable,
}

_BY_KIND: dict[str, type[EngramError]] = {
    "unauthorized": Unauthorized,
    "not-found": NotFound,
    "validation-error": ValidationFailed,
    "payload-too-large": PayloadTooLarge,
    "unsupported-media-type": UnsupportedMediaType,
    "service-unavailable": ServiceUnavailable,
    "broker-unavailable": ServiceUnavailable,
    "unavailable": ServiceUnavailable,
}


_REFINED: dict[tuple[int, str], type[EngramError]] = {(403, "quota-exceeded"): QuotaExceeded}
"""A status and kind whose class is a narrower one of the status's class."""


def error_class(status: int, kind: str) -> type[EngramError]:
    """The status decides first (it is the contract); a known kind refines it or an unknown one."""
    if (status, kind) in _REFINED:
        return _REFINED[(status, kind)]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if kind in _BY_KIND:
        return _BY_KIND[kind]
    return ServerError if status >= 500 else EngramError


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header; HTTP dates and junk are treated as absent."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds)


def error_from_response(response: httpx.Response) -> EngramError:
    """Build the typed exception for a non-2xx answer, problem+json or not."""
    body: Any = None
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {}
    raw_errors = body.get("errors")
    errors = [e for e in raw_errors if isinstance(e, dict)] if isinstance(raw_errors, list) else []
    problem_type = str(body.get("type") or f"/problems/http-{response.status_code}")
    title = str(body.get("title") or response.reason_phrase or "")
    detail = str(body.get("detail") or title or f"HTTP {response.status_code}")
    cls = error_class(response.status_code, problem_type.rstrip("/").rsplit("/", 1)[-1])
    instance = body.get("instance")
    error = cls(
        detail,
        status=response.status_code,
        type=problem_type,
        title=title,
        errors=errors,
        instance=str(instance) if instance is not None else None,
        retry_after=parse_retry_after(response.headers.get("retry-after")),
    )
    if isinstance(error, Conflict):
        error.superseded_by = _text(body.get("superseded_by"))
        error.duplicate_of = _text(body.get("duplicate_of"))
    if isinstance(error, QuotaExceeded):
        error.quota = str(body.get("quota") or "")
        error.limit, error.used, error.requested = (
            _count(body.get(name)) for name in ("limit", "used", "requested")
        )
    return error


def _text(value: Any) -> str | None:
    """A problem member that should be an id, or None when it is not one."""
    return value if isinstance(value, str) else None


def _count(value: Any) -> int | None:
    """A problem member that should be a count, or None when it is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
