"""RFC 9457 problem+json errors with stable types, for every HTTP surface."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pymongo.errors import ConnectionFailure
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
_TITLES = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Missing or invalid API key"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    406: ("not-acceptable", "Not acceptable"),
    409: ("conflict", "Conflict"),
    413: ("payload-too-large", "Payload too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    422: ("validation-error", "Request validation failed"),
    429: ("too-many-requests", "Too many requests"),
    503: ("unavailable", "Service unavailable"),
}


class Problem(Exception):
    """Raise to answer with a problem document; `kind` is the stable type suffix."""

    def __init__(
        self, status: int, kind: str | None = None, detail: str = "", **extra: Any
    ) -> None:
        super().__init__(detail or kind or str(status))
        default_kind, title = _TITLES.get(status, ("error", "Error"))
        self.status = status
        self.kind = kind or default_kind
        self.title = title
        self.detail = detail
        self.extra = extra


def problem_response(
    status: int, kind: str, title: str, detail: str, instance: str, **extra: Any
) -> JSONResponse:
    """The one place problem documents are shaped."""
    body = {
        "type": f"/problems/{kind}",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
        **extra,
    }
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _validation_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    """Where and why, never the rejected input (it may be content)."""
    return [
        {
            "loc": [str(p) for p in err.get("loc", ())],
            "msg": err.get("msg", ""),
            "type": err.get("type", ""),
        }
        for err in exc.errors()[:20]
    ]


def install_problem_handlers(app: FastAPI) -> None:
    """Every error, including unexpected ones, leaves as problem+json."""

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return raised_problem(exc, request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind, title = _TITLES.get(exc.status_code, ("error", "Error"))
        detail = exc.detail if isinstance(exc.detail, str) else title
        return problem_response(exc.status_code, kind, title, detail, request.url.path)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return problem_response(
            422,
            "validation-error",
            "Request validation failed",
            "one or more fields are invalid; see errors",
            request.url.path,
            errors=_validation_errors(exc),
        )

    @app.exception_handler(ConnectionFailure)
    async def _database_down(request: Request, exc: ConnectionFailure) -> JSONResponse:
        return raised_problem(exc, request.url.path)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return raised_problem(exc, request.url.path)


def raised_problem(exc: Exception, path: str) -> JSONResponse:
    """What a use case's exception answers: its own problem, 503 while the database is down,
    else a logged 500 (the handlers above, and routes served outside FastAPI, share it)."""
    if isinstance(exc, Problem):
        return problem_response(exc.status, exc.kind, exc.title, exc.detail, path, **exc.extra)
    if isinstance(exc, ConnectionFailure):
        return problem_response(
            503,
            "database-unavailable",
            "Service unavailable",
            "the database is not answering; retry",
            path,
        )
    log.error("unhandled error", extra={"error_type": type(exc).__name__, "path": path})
    return problem_response(500, "internal-error", "Internal error", "the error was logged", path)
