"""Query parameters a route does not declare are refused (422), never silently dropped.

FastAPI reads the query names a route declares and ignores every other one, so
`DELETE /v1/agents/a/memories?only=x` would behave exactly like the unfiltered call: a filter
the caller believes in is not applied. `service_app()` makes `refuse_undeclared_query` an
app-wide dependency, and FastAPI runs app-wide dependencies before a route's own (its
authentication included). A name that neither the endpoint nor any of its dependencies reads
is a 422 `unknown-parameter` problem naming it; a name declared as a scalar but given more
than once (FastAPI would silently keep one value) is a 422 `repeated-parameter`; a name
declared as a list may repeat. The check looks at the request line only, so answering it
before authentication tells an anonymous caller nothing the OpenAPI document does not.

What a route reads is taken from the dependant tree FastAPI resolves for it (aliases, query
models and sub-dependencies included) once per route, so a parameter becomes acceptable the
moment it is declared. A route that must take names it cannot know (a third party's
callback) depends on `any_query_params`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi._compat import ModelField, field_annotation_is_sequence, get_cached_model_fields
from fastapi.dependencies.models import Dependant
from fastapi.dependencies.utils import _get_param_aliases, _get_param_model
from fastapi.routing import _get_scope_effective_route_context
from pydantic import Json
from starlette.types import Scope

from engram_platform.problems import Problem

UNKNOWN = "unknown-parameter"
REPEATED = "repeated-parameter"
_NAMED = 10
"""At most this many names of each kind are listed; a name is cut at `_NAME_CHARS`."""
_NAME_CHARS = 64


async def any_query_params() -> None:
    """Depend on this (`dependencies=[Depends(any_query_params)]`) to take any query names."""


@dataclass(frozen=True)
class DeclaredQuery:
    """The query names a route reads, those it reads as lists, and whether it takes any."""

    names: frozenset[str]
    repeatable: frozenset[str]
    open: bool = False


def _tree(dependant: Dependant) -> Iterator[Dependant]:
    pending = [dependant]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(current.dependencies)


def _repeatable(field: ModelField) -> bool:
    """FastAPI reads every value (`getlist`) of a sequence-typed field that is not JSON."""
    is_json = any(type(item) is Json for item in field.field_info.metadata)
    return not is_json and field_annotation_is_sequence(field.field_info.annotation)


def declared_query(dependant: Dependant) -> DeclaredQuery:
    """The query names FastAPI reads for a route (the request keys it looks up, aliases and
    every accepted alias choice included, a query model's fields in place of the model)."""
    names: set[str] = set()
    repeatable: set[str] = set()
    takes_any = False
    for current in _tree(dependant):
        takes_any = takes_any or current.call is any_query_params
        for param in current.query_params:
            model = _get_param_model(param)
            if model is not None and model.model_config.get("extra") == "allow":
                takes_any = True
            for field in get_cached_model_fields(model) if model is not None else [param]:
                keys = {key for _, key in _get_param_aliases(field)}
                names |= keys
                if _repeatable(field):
                    repeatable |= keys
    return DeclaredQuery(frozenset(names), frozenset(repeatable), takes_any)


_DECLARED: dict[int, tuple[Dependant, DeclaredQuery]] = {}
"""By the dependant's id; the dependant is held so its id cannot be reused by another."""


def _route_dependant(scope: Scope) -> Dependant:
    """The dependant FastAPI solves for this request: an included route's effective one (with
    the dependencies given at inclusion), else the matched route's own."""
    context = _get_scope_effective_route_context(scope)
    dependant = getattr(context, "dependant", None)
    if not isinstance(dependant, Dependant):
        dependant = getattr(scope.get("route"), "dependant", None)
    if not isinstance(dependant, Dependant):
        raise RuntimeError("refuse_undeclared_query runs only as a route dependency")
    return dependant


def _declared(scope: Scope) -> DeclaredQuery:
    dependant = _route_dependant(scope)
    known = _DECLARED.get(id(dependant))
    if known is None or known[0] is not dependant:
        known = (dependant, declared_query(dependant))
        _DECLARED[id(dependant)] = known
    return known[1]


def _listed(names: list[str]) -> str:
    shown = ", ".join(f"'{name[:_NAME_CHARS]}'" for name in names[:_NAMED])
    more = len(names) - _NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _refusal(unknown: list[str], repeated: list[str]) -> Problem:
    """The 422: its detail names the parameters, `errors` has one entry per parameter."""
    details: list[str] = []
    errors: list[dict[str, Any]] = []
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        details.append(f"unknown query parameter{plural} {_listed(unknown)}")
        errors += [
            _error(name, "unknown parameter", "unknown_parameter") for name in unknown[:_NAMED]
        ]
    if repeated:
        many = len(repeated) > 1
        details.append(
            f"query parameter{'s' if many else ''} {_listed(repeated)} "
            f"{'take' if many else 'takes'} one value but was given more than once"
        )
        errors += [
            _error(name, "given more than once; send one value", "repeated_parameter")
            for name in repeated[:_NAMED]
        ]
    return Problem(422, UNKNOWN if unknown else REPEATED, "; ".join(details), errors=errors)


def _error(name: str, msg: str, kind: str) -> dict[str, Any]:
    """One entry shaped like a validation problem's `errors`."""
    return {"loc": ["query", name[:_NAME_CHARS]], "msg": msg, "type": kind}


async def refuse_undeclared_query(request: Request) -> None:
    """422 for a query name the route does not read, or a scalar one given more than once."""
    params = request.query_params
    if not params:
        return
    declared = _declared(request.scope)
    if declared.open:
        return
    unknown = sorted(name for name in params if name not in declared.names)
    repeated = sorted(
        name
        for name in params
        if name in declared.names
        and name not in declared.repeatable
        and len(params.getlist(name)) > 1
    )
    if unknown or repeated:
        raise _refusal(unknown, repeated)
