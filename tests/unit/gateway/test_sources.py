"""A memory write may name only the tenant's sources and supersede only its agent's memories;
the check asks each owning service once per request, and nobody when nothing is named."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from engram_gateway.domain.submissions import Submission
from engram_gateway.service.sources import SourceCheck
from engram_platform.internal import KNOWN_PATH
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit
AGENT = "agt_1"


@dataclass
class Write:
    derived_from: list[str] = field(default_factory=list)
    supersedes: str | None = None


class Owners:
    """Each owner's ids of tenant `tnt_a` (memory ids with their agent), calls recorded."""

    def __init__(self, held: dict[str, dict[str, str | None]], down: tuple[str, ...] = ()):
        self.held = held
        self.down = down
        self.calls: list[tuple[str, str, list[str]]] = []

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        assert method == "POST" and path == KNOWN_PATH
        ids: list[str] = kwargs["json"]["ids"]
        self.calls.append((service, tenant_id, ids))
        if service in self.down:
            return httpx.Response(503)
        mine = self.held.get(service, {}) if tenant_id == "tnt_a" else {}
        known = [i for i in ids if i in mine]
        agents = {i: mine[i] for i in known if mine[i] is not None}
        return httpx.Response(200, json={"known": known, "agents": agents})


class Notes:
    """Accepted writes the owners may not hold yet, by (kind, id)."""

    def __init__(self, rows: dict[tuple[str, str], Submission] | None = None) -> None:
        self.rows = rows or {}
        self.asked: list[list[tuple[str, str]]] = []

    async def held(
        self, tenant_id: str, items: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Submission]:
        self.asked.append(list(items))
        return {item: self.rows[item] for item in items if item in self.rows}


HELD: dict[str, dict[str, str | None]] = {
    "ingest": {"doc_a": None},
    "extraction": {"rec_a": None, "rec_b": None},
    "enrichment": {"carrier:c1:hq:0123456789abcdef": None},
    "memory": {"mem_a": AGENT, "mem_other_agent": "agt_2", "conv_a": AGENT},
}


def checker(notes: Notes | None = None, **options: Any) -> tuple[SourceCheck, Owners, Notes]:
    owners = Owners(HELD, **options)
    notes = notes or Notes()
    return SourceCheck(owners, notes), owners, notes


async def refused(check: SourceCheck, writes: list[Write], where: list[str]) -> Problem:
    with pytest.raises(Problem) as caught:
        await check.check("tnt_a", AGENT, writes, where)
    return caught.value


async def test_a_write_naming_nothing_asks_nobody() -> None:
    check, owners, notes = checker()
    await check.check("tnt_a", AGENT, [Write(), Write()], ["body", "memories"])
    assert owners.calls == [] and notes.asked == []


async def test_the_tenants_own_sources_of_every_kind_pass_with_one_call_per_owner() -> None:
    check, owners, notes = checker()
    writes = [
        Write(["doc_a", "rec_a"], supersedes="mem_a"),
        Write(["rec_b", "carrier:c1:hq:0123456789abcdef", "conv_a", "mem_other_agent"]),
        Write(["rec_a"]),
    ]
    await check.check("tnt_a", AGENT, writes, ["body", "memories"])
    assert sorted((s, ids) for s, _, ids in owners.calls) == [
        ("enrichment", ["carrier:c1:hq:0123456789abcdef"]),
        ("extraction", ["rec_a", "rec_b"]),
        ("ingest", ["doc_a"]),
        ("memory", ["mem_a", "conv_a", "mem_other_agent"]),
    ]
    assert notes.asked == []


async def test_another_tenants_source_is_a_422_naming_its_position() -> None:
    check, _, _ = checker()
    problem = await refused(check, [Write(["rec_a", "rec_foreign"])], ["body"])
    assert problem.status == 422
    assert problem.extra["errors"] == [
        {
            "loc": ["body", "derived_from", "1"],
            "msg": "derived_from[1] names no document, record, fact, memory or conversation "
            "of this tenant",
            "type": "unknown_source",
        }
    ]
    assert "derived_from[1]" in problem.detail


async def test_in_a_batch_each_foreign_source_is_named_by_memory_and_position() -> None:
    check, _, _ = checker()
    writes = [Write(["rec_a"]), Write(["doc_a", "doc_foreign", "not-an-id-anyone-issues"])]
    problem = await refused(check, writes, ["body", "memories"])
    assert problem.status == 422
    assert [e["loc"] for e in problem.extra["errors"]] == [
        ["body", "memories", "1", "derived_from", "1"],
        ["body", "memories", "1", "derived_from", "2"],
    ]
    assert problem.detail.startswith("memories[1].derived_from[1] names no")


async def test_an_id_of_no_known_kind_is_refused_without_asking() -> None:
    check, owners, _ = checker()
    problem = await refused(check, [Write(["rec-1"])], ["body"])
    assert problem.status == 422 and owners.calls == []


@pytest.mark.parametrize("target", ["mem_other_agent", "mem_foreign", "conv_missing"])
async def test_superseding_anything_but_this_agents_memory_is_a_404(target: str) -> None:
    check, _, _ = checker()
    problem = await refused(check, [Write(supersedes=target)], ["body"])
    assert problem.status == 404
    assert problem.extra["errors"][0]["loc"] == ["body", "supersedes"]
    assert "supersedes" in problem.detail


async def test_a_foreign_tenant_asks_with_its_own_tenant() -> None:
    check, owners, _ = checker()
    with pytest.raises(Problem) as caught:
        await check.check("tnt_b", AGENT, [Write(["rec_a"])], ["body"])
    assert caught.value.status == 422
    assert [tenant for _, tenant, _ in owners.calls] == ["tnt_b"]


async def test_writes_accepted_but_not_yet_stored_count_as_the_tenants() -> None:
    notes = Notes(
        {
            ("document", "doc_just_uploaded"): Submission("document", "doc_just_uploaded"),
            ("memory", "mem_pending"): Submission("memory", "mem_pending", agent_id=AGENT),
        }
    )
    check, _, notes = checker(notes)
    await check.check(
        "tnt_a", AGENT, [Write(["doc_just_uploaded"], supersedes="mem_pending")], ["body"]
    )
    assert sorted(item for asked in notes.asked for item in asked) == [
        ("conversation", "mem_pending"),
        ("document", "doc_just_uploaded"),
        ("memory", "mem_pending"),
    ]


async def test_an_owner_that_cannot_answer_is_a_503_not_a_pass() -> None:
    check, _, _ = checker(down=("extraction",))
    problem = await refused(check, [Write(["rec_a"])], ["body"])
    assert problem.status == 503
