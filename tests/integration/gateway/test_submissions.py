"""Uploads of one document name at the same moment are each accepted, none is a 500."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from engram_gateway.adapters.submissions import Submissions
from engram_gateway.domain.submissions import Submission
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant


async def test_concurrent_uploads_of_one_name_are_all_accepted(
    service: Callable[..., ServiceProcess],
) -> None:
    gateway = service("gateway")
    key = create_tenant(gateway.env)
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        for attempt in range(5):
            uploads = [
                client.post(
                    "/v1/documents",
                    json={
                        "name": f"race-{attempt}.csv",
                        "mime": "text/csv",
                        "text": f"id,name\nc{i},Carrier {i}\n",
                    },
                )
                for i in range(8)
            ]
            answers = await asyncio.gather(*uploads)
            assert [a.status_code for a in answers] == [202] * 8, [a.text for a in answers]
            ids = {a.json()["document_id"] for a in answers}
            assert len(ids) == 1, "one name is one document, uploaded in several versions"


async def test_bulk_records_that_race_on_one_id_are_all_kept(mongo_db: Any) -> None:
    """The local server answers a bulk upsert that lost its insert race without `nModified`;
    the rows are then written one by one, and none is lost."""
    store = Submissions(mongo_db)
    for attempt in range(5):
        rows = [(f"mem_{attempt}", {"agent_id": f"agt_{i}"}) for i in range(8)]
        await asyncio.gather(*(store.record_many("tnt_1", "memory", [row]) for row in rows))
        kept = await store.get("tnt_1", "memory", f"mem_{attempt}")
        assert kept is not None and str(kept.agent_id).startswith("agt_")


async def test_concurrent_records_go_in_trips_and_tell_new_kept_and_given_back(
    mongo_db: Any,
) -> None:
    """On the real server: writes recorded together answer None for a new id, the row (its id at
    least) for one already held, and the whole row for one given back (so the quota counts it
    again). The local server stops an unordered bulk at its first failed write, so the held ids
    after one given back are written alone."""
    store = Submissions(mongo_db)
    first = await asyncio.gather(*(store.record("tnt_1", "memory", f"m{n}") for n in range(6)))
    assert first == [None] * 6
    await store.release("tnt_1", "memory", "m1")
    again = await asyncio.gather(
        *(store.record("tnt_1", "memory", f"m{n}", agent_id="a1") for n in range(8))
    )
    assert again[0] == Submission("memory", "m0")
    assert again[1] is not None and not again[1].held
    held = again[2:6]
    assert all(a is not None and a.item_id == f"m{n}" and a.held for n, a in enumerate(held, 2))
    assert again[6:] == [None, None]
    for n in range(8):
        row = await store.get("tnt_1", "memory", f"m{n}")
        assert row is not None and row.agent_id == "a1" and row.held


async def test_a_noted_write_reads_back_typed_whatever_its_id_holds(mongo_db: Any) -> None:
    """Kind and id come back from the row's key even when the id holds colons; a release
    answers the write as it was, and the row reads as given back after it."""
    store = Submissions(mongo_db)
    await store.record("tnt:1", "document", "doc:a:b", version="v2", size_bytes=40)
    await store.record_many("tnt:1", "memory", [("mem:1", {"agent_id": "agt_1"})])
    assert await store.get("tnt:1", "document", "doc:a:b") == Submission(
        "document", "doc:a:b", version="v2", size_bytes=40
    )
    held = await store.held("tnt:1", [("memory", "mem:1"), ("memory", "mem:2")])
    assert held == {("memory", "mem:1"): Submission("memory", "mem:1", agent_id="agt_1")}

    released = await store.release("tnt:1", "document", "doc:a:b")
    assert released is not None and released.held and released.size_bytes == 40
    again = await store.get("tnt:1", "document", "doc:a:b")
    assert again is not None and not again.held
    assert await store.release("tnt:1", "document", "doc:a:b") is None, "given back once"
    assert await store.get("tnt:2", "document", "doc:a:b") is None, "only within its tenant"
