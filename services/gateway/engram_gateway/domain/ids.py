"""Ids the gateway names writes by: random, or stable per idempotency key (pure)."""

from __future__ import annotations

import hashlib
import secrets


def derived_id(prefix: str, tenant_id: str, agent_id: str, idempotency_key: str | None) -> str:
    """A retried POST with the same idempotency key names the same memory (or conversation)."""
    if idempotency_key is None:
        return f"{prefix}_{secrets.token_hex(16)}"
    seed = f"{tenant_id}\x1f{agent_id}\x1f{idempotency_key}".encode()
    if prefix != "mem":
        seed = f"{prefix}\x1f".encode() + seed
    return f"{prefix}_{hashlib.sha256(seed).hexdigest()[:32]}"


def memory_id_for(tenant_id: str, agent_id: str, idempotency_key: str | None) -> str:
    """A retried POST with the same idempotency key names the same memory."""
    return derived_id("mem", tenant_id, agent_id, idempotency_key)
