"""Typed access for routes to what a service's composition root built."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fastapi import FastAPI, Request

T = TypeVar("T")


def install(app: FastAPI, built: object) -> None:
    """Hand the service's built dependencies to its routes (call once, from `register`)."""
    app.state.dependencies = built


def provider(kind: type[T]) -> Callable[[Request], T]:
    """A FastAPI dependency that returns the installed dependencies, typed as `kind`."""

    def provide(request: Request) -> T:
        built = getattr(request.app.state, "dependencies", None)
        if not isinstance(built, kind):
            raise RuntimeError(f"{kind.__name__} not installed: the service has not started")
        return built

    provide.__name__ = f"provide_{kind.__name__}"
    return provide
