"""An owning service's answer to a request the gateway passes on for the caller's tenant: its
200 body, its own errors as the gateway's problems, and a 503 naming it when it cannot answer."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from engram_gateway.ports import Owners
from engram_platform.problems import Problem

PASSED_ON = frozenset({200, 404, 409, 422})
"""The owners' answers a caller sees as they are; any other is the owner failing."""
_SHAPED = {"type", "title", "status", "detail", "instance"}
"""Members every problem document has, shaped again by the gateway (`instance` is the owner's
internal path)."""


def unavailable(service: str) -> Problem:
    """The owner could not be asked, or answered what it never answers."""
    return Problem(503, "service-unavailable", f"the {service} service could not answer")


def owners_problem(service: str, status: int, raw: bytes) -> Problem:
    """The owner's problem document as the gateway's own, keeping its extra members."""
    try:
        body = json.loads(raw)
    except ValueError:
        return unavailable(service)
    if not isinstance(body, dict):
        return unavailable(service)
    extra = {k: v for k, v in body.items() if k not in _SHAPED}
    kind = str(body.get("type", "")).rsplit("/", 1)[-1] or None
    return Problem(status, kind, str(body.get("detail", "")), **extra)


class OwnerAnswers:
    """Asks the service that owns an item, for one tenant, and passes its answer on."""

    def __init__(self, owners: Owners) -> None:
        self.owners = owners

    async def raw(
        self,
        service: str,
        method: str,
        path: str,
        *,
        tenant_id: str,
        passed: Collection[int] = PASSED_ON,
        **kwargs: Any,
    ) -> bytes:
        """The owner's 200 body as its bytes (a page passed on is never decoded and encoded
        again); a status in `passed` raises the owner's problem, any other a 503."""
        response = await self.owners.request(service, method, path, tenant_id=tenant_id, **kwargs)
        return _answer(service, response.status_code, response.content, passed)

    async def json(
        self,
        service: str,
        method: str,
        path: str,
        *,
        tenant_id: str,
        passed: Collection[int] = PASSED_ON,
        **kwargs: Any,
    ) -> Any:
        """The owner's 200 body, parsed (see `raw`)."""
        raw = await self.raw(service, method, path, tenant_id=tenant_id, passed=passed, **kwargs)
        try:
            return json.loads(raw)
        except ValueError:
            raise unavailable(service) from None

    async def read_post(self, service: str, path: str, body: bytes, *, tenant_id: str) -> bytes:
        """A read-only POST over the lean client: the owner's 200 body as its bytes (see
        `raw`)."""
        status, raw = await self.owners.read_post(service, path, body, tenant_id=tenant_id)
        return _answer(service, status, raw, PASSED_ON)


def _answer(service: str, status: int, raw: bytes, passed: Collection[int]) -> bytes:
    if status not in passed:
        raise unavailable(service)
    if status != 200:
        raise owners_problem(service, status, raw)
    return raw
