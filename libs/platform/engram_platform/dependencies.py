"""Typed access for routes to what a service's composition root built."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from fastapi import FastAPI, Request

T = TypeVar("T")


def install(app: FastAPI, built: object) -> None:
    """Hand the service's built dependencies to its routes (call once, from `register`)."""
    app.state.dependencies = built


def provider(kind: type[T]) -> Callable[[Request], Awaitable[T]]:
    """A FastAPI dependency that returns the installed dependencies, typed as `kind` (async, so
    FastAPI calls it on the event loop instead of handing every request to a worker thread)."""

    async def provide(request: Request) -> T:
        built = getattr(request.app.state, "dependencies", None)
        if not isinstance(built, kind):
            raise RuntimeError(f"{kind.__name__} not installed: the service has not started")
        return built

    provide.__name__ = f"provide_{kind.__name__}"
    return provide
