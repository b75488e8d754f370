"""What every endpoint's call is made of, and the helpers that build them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Generic, TypeVar
from urllib.parse import quote

T = TypeVar("T")
Params = Mapping[str, str | int | float | bool]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP exchange and how to read its answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Params | None = None
    json: Any = None
    data: dict[str, str] | None = None
    files: dict[str, tuple[str, bytes, str]] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    retry_safe: bool = False
    authenticated: bool = True


def new_idempotency_key() -> str:
    """A fresh key for one logical write; retries of that write reuse it."""
    return uuid.uuid4().hex


def segment(value: str) -> str:
    """An id as one path segment (entity ids keep their `type:key` colon readable)."""
    return quote(value, safe=":@")


def no_answer(_: Any) -> None:
    return None


def only_set(params: Mapping[str, Any]) -> dict[str, str | int | float | bool]:
    """Query parameters without the ones left unset."""
    return {k: v for k, v in params.items() if v is not None}


def timestamp(value: Any) -> str:
    """A datetime or date range bound as the ISO-8601 text the filter takes."""
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"a memory filter holds JSON values and timestamps, not {type(value).__name__}")


def filter_json(filter: Mapping[str, Any]) -> str:
    """A memory filter as compact JSON (datetimes as ISO-8601), the listing's `filter` parameter."""
    return json.dumps(filter, separators=(",", ":"), default=timestamp)


def keyed(key: str | None) -> tuple[str, dict[str, str]]:
    """The write's idempotency key and the header carrying it."""
    chosen = key or new_idempotency_key()
    return chosen, {"Idempotency-Key": chosen}
