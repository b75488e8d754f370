"""Calls for a tenant's API keys (the key needs the `admin` role)."""

from __future__ import annotations

from typing import Any

from engram_client import models
from engram_client.calls.base import Call, segment


def create_key(role: str, name: str | None) -> Call[models.IssuedApiKey]:
    """Not retry-safe: each POST issues a key."""
    body: dict[str, Any] = {"role": role}
    if name is not None:
        body["name"] = name
    return Call("POST", "/v1/keys", models.IssuedApiKey.model_validate, json=body)


def list_keys() -> Call[list[models.ApiKey]]:
    """The tenant's keys, revoked ones too, oldest first."""
    return Call(
        "GET",
        "/v1/keys",
        lambda b: [models.ApiKey.model_validate(x) for x in b["keys"]],
        retry_safe=True,
    )


def revoke_key(key_id: str) -> Call[models.ApiKey]:
    """Retry-safe: revoking a revoked key answers it unchanged."""
    return Call(
        "DELETE", f"/v1/keys/{segment(key_id)}", models.ApiKey.model_validate, retry_safe=True
    )


def rotate_key(key_id: str) -> Call[models.IssuedApiKey]:
    """Not retry-safe: a repeat finds the old key revoked (409)."""
    return Call("POST", f"/v1/keys/{segment(key_id)}:rotate", models.IssuedApiKey.model_validate)
