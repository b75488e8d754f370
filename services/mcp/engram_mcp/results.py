"""Tool answers: the gateway's JSON as structured content and text, problems as MCP tool errors."""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from engram_client import Conflict, EngramError


def _plain(value: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """JSON-ready data without the fields the gateway left unset."""
    if isinstance(value, BaseModel):
        dumped: dict[str, Any] = value.model_dump(mode="json", exclude_none=True)
        return dumped
    return value


def _result(body: dict[str, Any], *, is_error: bool) -> CallToolResult:
    """The same body twice: structured for clients that read it, text for models that read that."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=body,
        is_error=is_error,
    )


def answer(value: BaseModel | dict[str, Any]) -> CallToolResult:
    """A successful call's answer as the gateway gave it (unset fields left out)."""
    return _result(_plain(value), is_error=False)


def problem_body(error: EngramError) -> dict[str, Any]:
    """The problem+json the gateway answered (or the client's stand-in when none arrived)."""
    body: dict[str, Any] = {
        "type": error.type,
        "title": error.title,
        "status": error.status,
        "detail": error.detail,
    }
    if error.errors:
        body["errors"] = error.errors
    if error.instance:
        body["instance"] = error.instance
    if error.retry_after is not None:
        body["retry_after"] = error.retry_after
    if isinstance(error, Conflict):
        for name in ("superseded_by", "duplicate_of"):
            if getattr(error, name):
                body[name] = getattr(error, name)
    return body


def problem(error: EngramError) -> CallToolResult:
    """A refused or failed call as an MCP tool error carrying the problem detail."""
    return _result(problem_body(error), is_error=True)


def local_problem(
    status: int, kind: str, title: str, detail: str, errors: list[dict[str, Any]] | None = None
) -> CallToolResult:
    """A problem found here before asking the gateway, shaped like the gateway's own."""
    return problem(
        EngramError(detail, status=status, type=f"/problems/{kind}", title=title, errors=errors)
    )


def unknown_arguments(tool: str, names: list[str]) -> CallToolResult:
    """A 422 naming every argument the tool does not take, as the gateway names unknown fields."""
    return local_problem(
        422,
        "validation-error",
        "Request validation failed",
        f"{tool} takes no argument {', '.join(repr(n) for n in names)}",
        [{"loc": [name], "msg": "unknown argument", "type": "extra_forbidden"} for name in names],
    )
