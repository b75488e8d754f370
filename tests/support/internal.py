"""The internal token every service a test starts shares, and the headers an internal call carries."""

from __future__ import annotations

from typing import Any

from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER

INTERNAL_TOKEN = "test-internal-token-0123456789abcdef"
"""Set on every service process the tests and benchmarks start (`ServiceProcess`)."""


def internal_headers(tenant_id: str) -> dict[str, str]:
    """What the gateway sends: the tenant it resolved and the shared token."""
    return {TENANT_HEADER: tenant_id, TOKEN_HEADER: INTERNAL_TOKEN}


def accept_internal_calls(app: Any) -> None:
    """Give an app built by hand (no `service_app`) the token its internal routes require."""
    app.state.internal_token = INTERNAL_TOKEN
