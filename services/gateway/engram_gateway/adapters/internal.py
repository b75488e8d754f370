"""Reads proxied to the owning services over their internal HTTP APIs."""

from __future__ import annotations

from typing import Any

import httpx
from opentelemetry import propagate

from engram_platform.internal import TENANT_HEADER, TOKEN_HEADER
from engram_platform.lean_http import LeanHttpError, LeanJsonClient
from engram_platform.problems import Problem


class InternalServices:
    """One pooled client; each call names the owning service and carries the tenant and token."""

    def __init__(self, urls: dict[str, str], *, token: str, timeout: float) -> None:
        self.urls = urls
        self.token = token
        self.timeout = timeout
        self.client = httpx.AsyncClient(timeout=timeout)
        self._lean: dict[str, LeanJsonClient] = {}

    def _headers(self, tenant_id: str) -> dict[str, str]:
        headers = {TENANT_HEADER: tenant_id, TOKEN_HEADER: self.token}
        propagate.inject(headers)
        return headers

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        """Call a service; unreachable means 503 with which service, never a hang or a 500."""
        try:
            return await self.client.request(
                method, f"{self.urls[service]}{path}", headers=self._headers(tenant_id), **kwargs
            )
        except httpx.HTTPError:
            raise Problem(
                503, "service-unavailable", f"the {service} service is not answering"
            ) from None

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]:
        """A read-only POST of JSON bytes over the lean kept-alive client (the recall hop): the
        status and the raw answer; unreachable means 503, as `request`."""
        lean = self._lean.get(service)
        if lean is None:
            lean = self._lean[service] = LeanJsonClient(self.urls[service], timeout=self.timeout)
        try:
            return await lean.post(path, body, self._headers(tenant_id))
        except (LeanHttpError, OSError, TimeoutError):
            raise Problem(
                503, "service-unavailable", f"the {service} service is not answering"
            ) from None

    async def close(self) -> None:
        await self.client.aclose()
        for lean in self._lean.values():
            await lean.close()
