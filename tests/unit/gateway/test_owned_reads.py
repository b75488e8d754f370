"""An item read from the service that owns it, `pending` while only the gateway's submission
log knows it, and 404 for a write never accepted (or accepted for another agent)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from engram_gateway.domain.submissions import Submission
from engram_gateway.service.owned import OwnedReads
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit


class Owner:
    """One owning service answering every GET with the same status and body."""

    def __init__(self, status: int, body: dict[str, Any] | None = None) -> None:
        self.status, self.body = status, body or {}

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        return httpx.Response(self.status, json=self.body)


class Submissions:
    """The gateway's notes of accepted writes, by (tenant, kind, id)."""

    def __init__(self, notes: dict[tuple[str, str, str], Submission]) -> None:
        self.notes = notes

    async def record(self, tenant_id: str, kind: str, item_id: str, **fields: Any) -> Any:
        raise AssertionError("a read records nothing")

    async def record_many(self, tenant_id: str, kind: str, items: Any) -> Any:
        raise AssertionError("a read records nothing")

    async def get(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        return self.notes.get((tenant_id, kind, item_id))

    async def release(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        raise AssertionError("a read releases nothing")


NOTE = {("t1", "memory", "mem_1"): Submission("memory", "mem_1", agent_id="agt_1", version="3")}


async def _read(owner: Owner, agent_id: str | None = "agt_1") -> dict[str, Any]:
    return await OwnedReads(owner, Submissions(NOTE)).view_or_pending(
        "t1",
        service="memory",
        path="/internal/v1/agents/agt_1/memories/mem_1",
        kind="memory",
        item_id="mem_1",
        pending={"memory_id": "mem_1"},
        with_version=True,
        agent_id=agent_id,
    )


async def test_the_owners_view_wins_once_it_has_the_item() -> None:
    assert await _read(Owner(200, {"memory_id": "mem_1", "status": "active"})) == {
        "memory_id": "mem_1",
        "status": "active",
    }


async def test_an_accepted_write_the_owner_lacks_is_pending_with_the_noted_fields() -> None:
    assert await _read(Owner(404)) == {"memory_id": "mem_1", "version": "3", "status": "pending"}


async def test_a_write_never_accepted_or_accepted_for_another_agent_is_404() -> None:
    with pytest.raises(Problem) as other_agent:
        await _read(Owner(404), agent_id="agt_2")
    assert other_agent.value.status == 404 and other_agent.value.detail == "no such memory"

    reads = OwnedReads(Owner(404), Submissions({}))
    with pytest.raises(Problem) as never:
        await reads.view_or_pending(
            "t1", service="ingest", path="/x", kind="document", item_id="doc_1", pending={}
        )
    assert never.value.status == 404 and never.value.detail == "no such document"


async def test_an_owner_that_fails_is_503_not_pending() -> None:
    with pytest.raises(Problem) as failed:
        await _read(Owner(500))
    assert failed.value.status == 503 and "memory" in failed.value.detail
