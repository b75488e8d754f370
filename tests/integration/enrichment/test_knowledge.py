"""Enrichment over the real broker and database: facts, contradictions, articles, replays."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from pymongo import MongoClient

from engram_enrichment.adapters.store import ENTITIES
from engram_enrichment.domain.ids import fact_id
from engram_events import decode
from tests.conftest import Infra
from tests.integration.enrichment.helpers import (
    entity,
    send,
    start_enrichment,
    topic,
)
from tests.support.internal import internal_headers
from tests.support.kafka import read_all, wait_for
from tests.support.polling import until, until_async
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant
from tests.unit.enrichment import golden
from tests.unit.enrichment.scenario import tombstoned, upserted

KNOWLEDGE = "engram.knowledge.v1"


def _db(infra: Infra, names: dict[str, str], service: str) -> Any:
    return MongoClient(infra.mongodb_uri)[f"{names['ENGRAM_DATABASE_PREFIX']}{service}"]


def _tenant(gateway: ServiceProcess, infra: Infra, names: dict[str, str]) -> tuple[str, str]:
    """A fresh tenant's key and id."""
    name = f"acme-{uuid.uuid4().hex[:8]}"
    key = create_tenant(gateway.env, name)
    row = _db(infra, names, "gateway").tenants.find_one({"name": name})
    return key, str(row["_id"])


async def _knowledge_events(infra: Infra, names: dict[str, str]) -> list[dict[str, Any]]:
    return [m for m in await read_all(infra.bootstrap, topic(names, KNOWLEDGE)) if m]


async def test_scenario_through_the_gateway_matches_the_expected_articles(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], tmp_path: Path
) -> None:
    enrichment = start_enrichment(service, tmp_path)
    gateway = service("gateway", ENGRAM_GATEWAY_ENRICHMENT_URL=enrichment.url)
    key, tenant = _tenant(gateway, infra, names)
    other_key, _ = _tenant(gateway, infra, names)
    path = f"/v1/knowledge/entities/{golden.ENTITY}"
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}
    ) as api:

        async def article_is(step: str) -> dict[str, Any]:
            async def fetch() -> Any:
                response = await api.get(path)
                return response.json() if response.status_code == 200 else None

            view = await until_async(
                fetch,
                f"the article after {step}",
                30,
                0.25,
                ready=lambda v: v is not None and v["article"] == golden.expected(step),
            )
            return dict(view)

        await send(infra, names, golden.events("create", tenant))
        created = await article_is("create")
        assert {f["status"] for f in created["facts"]} == {"active"}

        await send(infra, names, golden.events("contradict", tenant))
        contested = await article_is("contradict")
        flagged = [f for f in contested["facts"] if f["contested"]]
        assert sorted(f["value"] for f in flagged) == ["Berlin", "Munich"]
        assert all(f["status"] == "contested" for f in flagged)
        listing = (await api.get("/v1/knowledge/contradictions", params={"status": "open"})).json()
        (opened,) = listing["contradictions"]
        of_entity = {"entity_id": opened["entity_id"]}
        mine = await api.get("/v1/knowledge/contradictions", params=of_entity)
        assert mine.json()["contradictions"] == [opened]
        others = {"entity_id": "carrier:nobody", "status": "open"}
        elsewhere = await api.get("/v1/knowledge/contradictions", params=others)
        assert elsewhere.json()["contradictions"] == []
        sources = sorted(s["record_id"] for c in opened["claims"] for s in c["support"])
        assert sources == ["rec_a", "rec_b"] and opened["status"] == "open"
        announced = await wait_for(
            infra.bootstrap,
            topic(names, KNOWLEDGE),
            lambda m: m.get("event_type") == "contradiction.opened",
        )
        assert len(announced) == 1
        assert announced[0]["payload"]["contradiction_id"] == opened["contradiction_id"]

        berlin = next(f for f in flagged if f["value"] == "Berlin")
        munich = next(f for f in flagged if f["value"] == "Munich")
        resolve = f"/v1/knowledge/contradictions/{opened['contradiction_id']}/resolve"
        assert (await api.post(resolve, json={"keep": "carrier:c1:hq:0"})).status_code == 422
        resolved = await api.post(resolve, json={"keep": berlin["fact_id"]})
        assert resolved.status_code == 200, resolved.text
        body = resolved.json()
        assert body["contradiction"]["status"] == "resolved"
        assert body["entity"]["article"] == golden.expected("resolve")
        loser = next(f for f in body["entity"]["facts"] if f["fact_id"] == munich["fact_id"])
        assert loser["status"] == "superseded" and loser["superseded_by"] == berlin["fact_id"]
        assert (await api.post(resolve, json={"keep": munich["fact_id"]})).status_code == 409
        listing = (await api.get("/v1/knowledge/contradictions", params={"status": "open"})).json()
        assert listing["contradictions"] == []

        await send(infra, names, golden.events("revise", tenant))
        revised = await article_is("revise")
        everything = (await api.get(path, params={"include_withdrawn": "true"})).json()
        old_fleet = [f for f in everything["facts"] if f["status"] == "withdrawn"]
        assert [f["attribute"] for f in old_fleet] == ["fleet"] and old_fleet[0]["value"] is None
        rec_a = [
            f["attribute"]
            for f in revised["facts"]
            for s in f["support"]
            if s["record_id"] == "rec_a"
        ]
        assert sorted(rec_a) == ["fleet", "hq", "name"], "rec_a supports one fact per attribute"
        assert all(f["support"] for f in revised["facts"]), "no live fact without support"

        typed = (await api.get("/v1/knowledge/entities", params={"type": "carrier"})).json()
        assert [e["entity_id"] for e in typed["entities"]] == [golden.ENTITY]
        assert (await api.get("/v1/knowledge/entities", params={"type": "port"})).json()[
            "entities"
        ] == []
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {other_key}"}
    ) as stranger:
        assert (await stranger.get(path)).status_code == 404
        assert (await stranger.get("/v1/knowledge/contradictions")).json()["contradictions"] == []
        assert (await stranger.post(resolve, json={"keep": berlin["fact_id"]})).status_code == 404


async def test_replays_change_nothing_and_tombstones_withdraw(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], tmp_path: Path
) -> None:
    enrichment = start_enrichment(service, tmp_path)
    first = upserted("rec_a", 1, {"hq": "Berlin", "fleet": 3})
    second = upserted("rec_b", 1, {"hq": "Munich"}, minute=1)
    await send(infra, names, [first, second])
    async with httpx.AsyncClient(base_url=enrichment.url) as internal:
        before = await until_async(
            lambda: entity(internal, "tnt_a", "carrier:c1"),
            "carrier:c1's contradictions",
            30,
            0.25,
            ready=lambda v: v is not None and v["contradictions"],
        )
        announced = await _knowledge_events(infra, names)
        db = _db(infra, names, "enrichment")
        applied = db.applied_events.count_documents({})

        same_content_new_ids = [
            upserted("rec_a", 1, {"hq": "Berlin", "fleet": 3}),
            upserted("rec_b", 1, {"hq": "Munich"}, minute=1),
        ]
        await send(infra, names, [first, second, *same_content_new_ids])
        until(
            lambda: db.applied_events.count_documents({}) >= applied + 2,
            "the two new event ids to be applied",
            30,
            0.2,
        )
        assert db.applied_events.count_documents({}) == applied + 2, "the new ids were handled"
        after = await entity(internal, "tnt_a", "carrier:c1")
        assert after == before, "replaying the same records changes nothing"
        assert await _knowledge_events(infra, names) == announced, "and announces nothing"
        assert db.contradictions.count_documents({}) == 1

        await send(infra, names, [tombstoned("rec_b", prune_job_id="job_1", entity_id=None)])
        acks = await wait_for(
            infra.bootstrap,
            topic(names, "engram.tombstones.v1"),
            lambda m: m.get("event_type") == "tombstone.applied",
        )
        assert acks[0]["payload"]["counts"] == {"facts": 1, "articles": 1, "vectors": 1}
        assert acks[0]["payload"]["source_ids"] == ["rec_b"]
        verified = await internal.post(
            "/internal/v1/prune/verify",
            headers=internal_headers("tnt_a"),
            json={"records": ["rec_b"], "facts": acks[0]["payload"]["tombstoned_ids"]},
        )
        assert verified.json() == {
            "references": {
                "records": 0,
                "facts": 0,
                "relations": 0,
                "article_sections": 0,
                "section_vectors": 0,
                "passages": 0,
                "passage_vectors": 0,
            }
        }
        berlin = fact_id("carrier:c1", "hq", "Berlin")
        for records in ([], ["rec_b"]):
            live = await internal.post(
                "/internal/v1/prune/verify",
                headers=internal_headers("tnt_a"),
                json={"records": records, "facts": [berlin, "carrier:nobody:hq:0"]},
            )
            assert live.json()["references"]["facts"] == 1, "a live fact still stands"
        final = await entity(internal, "tnt_a", "carrier:c1")
        assert final is not None and "Munich" not in final["article"]
        (item,) = final["contradictions"]
        assert item["status"] == "resolved"
        detail = await internal.get(
            f"/internal/v1/knowledge/contradictions/{item['contradiction_id']}",
            headers=internal_headers("tnt_a"),
        )
        resolution = detail.json()["resolution"]
        assert resolution["mode"] == "automatic" and "rec_b was tombstoned" in resolution["reason"]
    kinds = [m["event_type"] for m in await _knowledge_events(infra, names)]
    assert kinds.count("fact.withdrawn") == 1 and kinds.count("contradiction.resolved") == 1


async def test_a_failed_write_is_retried_dead_lettered_and_never_reported_applied(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str], tmp_path: Path
) -> None:
    db = _db(infra, names, "enrichment")
    entities = db[ENTITIES]
    entities.insert_one(
        {"_id": "tnt_a:carrier:broken", "tenant_id": "someone_else", "note": "blocks the write"}
    )
    start_enrichment(service, tmp_path, ENGRAM_ENRICHMENT_MAX_ATTEMPTS="3")
    doomed = upserted("rec_x", 1, {"name": "Doomed"}, entity_id="carrier:broken")
    fine = upserted("rec_y", 1, {"name": "Fine"}, entity_id="carrier:fine")
    await send(infra, names, [doomed, fine])

    (letter,) = await wait_for(infra.bootstrap, topic(names, "engram.dlq.v1"), lambda m: True)
    assert letter["consumer"] == "enrichment" and letter["attempts"] == 3
    assert letter["error_type"] == "retries_exhausted:ConcurrentUpdate"
    assert decode(base64.b64decode(letter["value_base64"])).event_id == doomed.event_id
    await wait_for(
        infra.bootstrap,
        topic(names, KNOWLEDGE),
        lambda m: m.get("payload", {}).get("entity_id") == "carrier:fine",
    )
    events = await _knowledge_events(infra, names)
    assert not [m for m in events if m["payload"]["entity_id"] == "carrier:broken"]
    assert db.applied_events.count_documents({}) == 1, "only the good update counts as applied"
    assert entities.find_one({"_id": "tnt_a:carrier:broken"})["tenant_id"] == "someone_else"
