"""Calls for the tenant's record types (`/v1/schema/types`; changes need the `admin` role)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram_client import models
from engram_client.calls.base import Call, only_set, segment

TYPES = "/v1/schema/types"


def list_types() -> Call[list[models.RecordType]]:
    """Every type in force for the tenant, bundled and declared, by name."""
    return Call(
        "GET",
        TYPES,
        lambda b: [models.RecordType.model_validate(x) for x in b["types"]],
        retry_safe=True,
    )


def get_type(name: str, version: int | None = None) -> Call[models.RecordType]:
    """The definition in force, or the tenant's `version` of it."""
    return Call(
        "GET",
        f"{TYPES}/{segment(name)}",
        models.RecordType.model_validate,
        params=only_set({"version": version}) or None,
        retry_safe=True,
    )


def type_versions(name: str) -> Call[models.RecordTypeVersions]:
    """The tenant's versions of a type, oldest first, and the bundled definition."""
    return Call(
        "GET",
        f"{TYPES}/{segment(name)}/versions",
        models.RecordTypeVersions.model_validate,
        retry_safe=True,
    )


def put_type(name: str, definition: Mapping[str, Any]) -> Call[models.RecordType]:
    """Not retry-safe: each PUT makes a new version."""
    return Call(
        "PUT", f"{TYPES}/{segment(name)}", models.RecordType.model_validate, json=dict(definition)
    )


def delete_type(name: str) -> Call[models.RecordType]:
    """Not retry-safe: a repeat finds nothing to retire (404)."""
    return Call("DELETE", f"{TYPES}/{segment(name)}", models.RecordType.model_validate)
