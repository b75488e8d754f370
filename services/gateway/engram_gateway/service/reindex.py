"""Moving memories and knowledge to another embedder with one call: each store's service starts
its own move (or reports one), and the operator sees them side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_gateway.domain.reindex import (
    PATHS,
    REFUSED,
    UNAVAILABLE,
    combined,
    refusal,
)
from engram_gateway.ports import OwningServices
from engram_platform.problems import Problem

REFUSALS = (409, 422)


class Reindexes:
    """A store whose service does not answer is reported `unavailable`, never fails the rest."""

    def __init__(self, owners: OwningServices) -> None:
        self.owners = owners

    async def start(self, tenant_id: str, body: dict[str, Any], stores: Sequence[str]) -> Any:
        """Start the move in every store named; 409/422 as the first refusal when none
        started, 503 when no store's service answered."""
        views = {s: await self._call(tenant_id, s, "POST", json=body) for s in stores}
        refused = refusal(views)
        if refused is not None:
            raise Problem(int(refused["status"]), str(refused["kind"]), str(refused["error"]))
        if all(view["state"] == UNAVAILABLE for view in views.values()):
            raise Problem(503, "service-unavailable", "no store's service is answering")
        return combined(views)

    async def progress(self, tenant_id: str, stores: Sequence[str]) -> dict[str, Any]:
        """Every store's latest reindex, and one view over them."""
        return combined({s: await self._call(tenant_id, s, "GET") for s in stores})

    async def _call(self, tenant_id: str, store: str, method: str, **kw: Any) -> dict[str, Any]:
        service, path = PATHS[store]
        try:
            response = await self.owners.request(service, method, path, tenant_id=tenant_id, **kw)
        except Problem:
            return {"state": UNAVAILABLE}
        answer: dict[str, Any] = response.json() if response.content else {}
        if response.status_code == 200:
            return answer
        if response.status_code in REFUSALS:
            kind = str(answer.get("type", "")).rsplit("/", 1)[-1] or "reindex-refused"
            detail = str(answer.get("detail", ""))
            return {"state": REFUSED, "status": response.status_code, "kind": kind, "error": detail}
        return {"state": UNAVAILABLE, "status": response.status_code}
