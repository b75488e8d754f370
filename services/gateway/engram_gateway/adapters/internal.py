"""Reads proxied to the owning services over their internal HTTP APIs."""

from __future__ import annotations

from typing import Any

import httpx
from opentelemetry import propagate

from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER
from engram_platform.problems import Problem


class InternalServices:
    """One pooled client; each call names the owning service and carries the tenant and token."""

    def __init__(self, urls: dict[str, str], *, token: str, timeout: float) -> None:
        self.urls = urls
        self.token = token
        self.client = httpx.AsyncClient(timeout=timeout)

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        """Call a service; unreachable means 503 with which service, never a hang or a 500."""
        headers = {TENANT_HEADER: tenant_id, TOKEN_HEADER: self.token}
        propagate.inject(headers)
        try:
            return await self.client.request(
                method, f"{self.urls[service]}{path}", headers=headers, **kwargs
            )
        except httpx.HTTPError:
            raise Problem(
                503, "service-unavailable", f"the {service} service is not answering"
            ) from None

    async def close(self) -> None:
        await self.client.aclose()
