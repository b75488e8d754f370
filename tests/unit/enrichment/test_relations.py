"""Relations: reference fields become relation facts, rows follow them, walks and paths read
them from both ends, and a pruned record takes its relations along."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from engram_enrichment.api import ROUTERS
from engram_enrichment.api.dependencies import EnrichmentDeps
from engram_enrichment.domain.article import render
from engram_enrichment.domain.relations import decode_cursor, encode_cursor
from engram_enrichment.domain.schema import Schema
from engram_enrichment.handlers import EnrichmentHandlers
from engram_enrichment.service.expansion import expand
from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.relations import BadCursor, NoSuchEntity, RelationGraph, When
from engram_enrichment.service.resolution import Resolutions
from engram_enrichment.service.verify import references
from engram_events import Envelope, new_event
from engram_events.catalog import RECORD_UPSERTED
from engram_events.ids import Scalar
from engram_events.payloads.records import (
    Lineage,
    RecordUpserted,
    Reference,
    ReferenceTarget,
    TypeDefinition,
)
from engram_platform.dependencies import install
from engram_platform.problems import install_problem_handlers
from tests.support.internal import accept_internal_calls, internal_headers
from tests.unit.enrichment.fakes import MemoryRelationRows, MemoryStore, StagedEvents
from tests.unit.enrichment.scenario import SHA, at, tombstoned

pytestmark = pytest.mark.unit

T = "tnt_a"


def ref(field: str, predicate: str, to: str, *keys: str, many: bool = False) -> Reference:
    return Reference(
        field=field,
        predicate=predicate,
        object_type=to,
        many=many,
        targets=[ReferenceTarget(key=k, entity_id=f"{to}:{k}") for k in keys],
    )


def record(
    record_id: str,
    entity_id: str,
    attributes: dict[str, Scalar],
    refs: list[Reference] | None = None,
    revision: int = 1,
) -> Envelope[Any]:
    rtype = entity_id.split(":", 1)[0]
    payload = RecordUpserted(
        record_id=record_id,
        record_type=rtype,
        entity_id=entity_id,
        revision=revision,
        attributes=attributes,
        content_sha256=SHA,
        lineage=Lineage(document_id=f"doc_{record_id}", locator="row:2"),
        observed_at=at(revision),
        references=refs or [],
    )
    return new_event(RECORD_UPSERTED, payload, tenant_id=T)


class World:
    """Enrichment's handlers over in-memory stores, with the relation rows kept."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.rows = MemoryRelationRows(self.store)
        self.kb = KnowledgeBase(self.store, relations=self.rows)
        self.handlers = EnrichmentHandlers(self.kb, Schema())
        self.graph = RelationGraph(self.rows)

    async def apply(self, *events: Envelope[Any]) -> None:
        for event in events:
            await self.handlers.on_record_upserted(event)

    def edges(self) -> set[tuple[str, str, str, str]]:
        return {
            (r["subject_id"], r["predicate"], r["object_id"], r["status"])
            for r in self.rows.rows.values()
        }


def shipment(record_id: str, key: str, supplier: str, carrier: str) -> Envelope[Any]:
    return record(
        record_id,
        f"shipment:{key}",
        {"id": key, "supplier_id": supplier, "carrier_id": carrier},
        [
            ref("supplier_id", "supplied_by", "supplier", supplier),
            ref("carrier_id", "carried_by", "carrier", carrier),
        ],
    )


async def supply_chain() -> World:
    world = World()
    await world.apply(
        record("rec_s1", "supplier:s1", {"id": "s1", "name": "Nordic"}),
        record("rec_c1", "carrier:c1", {"id": "c1", "name": "Acme"}),
        record("rec_c2", "carrier:c2", {"id": "c2", "name": "Borealis"}),
        shipment("rec_sh1", "sh1", "s1", "c1"),
        shipment("rec_sh2", "sh2", "s1", "c2"),
        shipment("rec_sh3", "sh3", "s1", "c9"),
    )
    return world


async def test_a_reference_field_becomes_a_relation_fact_and_a_row() -> None:
    world = await supply_chain()
    entity = await world.kb.load(T, "shipment:sh1")
    assert entity is not None
    [carried] = [f for f in entity.facts.values() if f.attribute == "carrier_id"]
    assert carried.value == "c1" and carried.relation is not None
    assert carried.relation.object_id == "carrier:c1"
    assert ("shipment:sh1", "carried_by", "carrier:c1", "active") in world.edges()
    row = next(r for r in world.rows.rows.values() if r["relation_id"] == carried.fact_id)
    assert [s["record_id"] for s in row["support"]] == ["rec_sh1"]


async def test_a_single_valued_relation_with_two_targets_is_contested() -> None:
    world = await supply_chain()
    await world.apply(
        record(
            "rec_fix",
            "shipment:sh1",
            {"id": "sh1", "carrier_id": "c2"},
            [ref("carrier_id", "carried_by", "carrier", "c2")],
        )
    )
    carried = {(s, o, status) for s, p, o, status in world.edges() if p == "carried_by"}
    assert {
        ("shipment:sh1", "carrier:c1", "contested"),
        ("shipment:sh1", "carrier:c2", "contested"),
    } <= carried
    entity = await world.kb.load(T, "shipment:sh1")
    assert entity is not None
    assert [c.attribute for c in entity.contradictions.values()] == ["carrier_id"]


async def test_a_list_valued_reference_holds_several_targets_without_contradiction() -> None:
    world = World()
    await world.apply(
        record(
            "rec_w1",
            "warehouse:w1",
            {"id": "w1", "carrier_ids": "c1;c2"},
            [ref("carrier_ids", "served_by", "carrier", "c1", "c2", many=True)],
        )
    )
    assert world.edges() == {
        ("warehouse:w1", "served_by", "carrier:c1", "active"),
        ("warehouse:w1", "served_by", "carrier:c2", "active"),
    }


async def test_a_tombstoned_record_takes_its_relations_and_verify_counts_them() -> None:
    world = await supply_chain()
    await world.handlers.on_record_tombstoned(
        tombstoned("rec_sh1", prune_job_id="job_1", entity_id="shipment:sh1")
    )
    assert not any(s == "shipment:sh1" for s, _, _, _ in world.edges())
    found = await references(world.kb, None, T, ["rec_sh1", "rec_sh2"], [])
    assert found["relations"] == 2, "sh2's two relations still rest on rec_sh2"
    assert (await references(world.kb, None, T, ["rec_sh1"], []))["relations"] == 0


async def test_a_walk_marks_unknown_targets_unresolved_and_goes_two_hops() -> None:
    world = await supply_chain()
    one = await world.graph.relations(
        T, "shipment:sh3", direction="out", predicate=None, depth=1, limit=10, cursor=None
    )
    assert {(r["to"], r["resolved"]) for r in one["relations"]} == {
        ("supplier:s1", True),
        ("carrier:c9", False),
    }
    two = await world.graph.relations(
        T, "carrier:c1", direction="both", predicate=None, depth=2, limit=100, cursor=None
    )
    assert {(r["depth"], r["from"], r["to"]) for r in two["relations"]} == {
        (1, "carrier:c1", "shipment:sh1"),
        (2, "shipment:sh1", "supplier:s1"),
    }
    with pytest.raises(NoSuchEntity):
        await world.graph.walk(T, "carrier:c9", "both", None, 1)


async def test_an_entity_that_lost_its_support_has_no_edges_either_way() -> None:
    world = await supply_chain()
    await world.handlers.on_record_tombstoned(
        tombstoned("rec_c1", prune_job_id="job_1", entity_id="carrier:c1")
    )
    with pytest.raises(NoSuchEntity):
        await world.graph.walk(T, "carrier:c1", "both", None, 1)
    out = await world.graph.relations(
        T, "shipment:sh1", direction="out", predicate=None, depth=2, limit=10, cursor=None
    )
    assert ("carrier:c1", False) in {(r["to"], r["resolved"]) for r in out["relations"]}
    assert all(r["from"] != "carrier:c1" for r in out["relations"])


async def test_pages_follow_the_cursor_without_gaps_or_repeats() -> None:
    world = await supply_chain()
    seen: list[str] = []
    cursor = None
    while True:
        page = await world.graph.relations(
            T, "supplier:s1", direction="both", predicate=None, depth=2, limit=2, cursor=cursor
        )
        seen += [f"{r['relation_id']}@{r['from']}" for r in page["relations"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    whole = await world.graph.relations(
        T, "supplier:s1", direction="both", predicate=None, depth=2, limit=100, cursor=None
    )
    assert seen == [f"{r['relation_id']}@{r['from']}" for r in whole["relations"]]
    assert len(seen) == 6
    with pytest.raises(BadCursor):
        await world.graph.relations(
            T, "supplier:s1", direction="both", predicate=None, depth=1, limit=2, cursor="nope"
        )


def test_a_cursor_round_trips() -> None:
    order = (2, "carried_by", "out", "carrier:c1", "shipment:sh1:carrier_id:abc")
    assert decode_cursor(encode_cursor(order)) == order
    assert decode_cursor("e30") is None


async def test_paths_are_shortest_first_and_walk_relations_either_way() -> None:
    world = await supply_chain()
    found = await world.graph.paths(T, "carrier:c1", "carrier:c2", 4, 10)
    assert found["length"] == 4
    [path] = found["paths"]
    assert [(e["from"], e["to"], e["direction"]) for e in path["edges"]] == [
        ("carrier:c1", "shipment:sh1", "in"),
        ("shipment:sh1", "supplier:s1", "out"),
        ("supplier:s1", "shipment:sh2", "in"),
        ("shipment:sh2", "carrier:c2", "out"),
    ]
    assert (await world.graph.paths(T, "carrier:c1", "carrier:c2", 3, 10))["paths"] == []
    with pytest.raises(NoSuchEntity):
        await world.graph.paths(T, "carrier:c1", "carrier:c9", 3, 10)


async def test_the_article_links_its_relations() -> None:
    world = await supply_chain()
    entity = await world.kb.load(T, "shipment:sh1")
    assert entity is not None
    article = render(entity)
    assert "## Relations" in article
    assert "[carrier:c1](/v1/knowledge/entities/carrier:c1)" in article


async def test_expansion_follows_each_hit_with_its_neighbours_facts_nearest_first() -> None:
    world = await supply_chain()
    carrier = await world.kb.load(T, "carrier:c1")
    assert carrier is not None
    [name] = [f for f in carrier.facts.values() if f.attribute == "name"]
    hit = {"kind": "fact", "entity_id": "carrier:c1", "fact_id": name.fact_id}
    one = await expand(world.graph, world.kb, T, [hit], 1)
    assert one[0] == hit
    assert {r["entity_id"] for r in one[1:]} == {"shipment:sh1"}
    assert all(r["expanded"]["distance"] == 1 for r in one[1:])
    two = await expand(world.graph, world.kb, T, [hit], 2)
    distances = [(r["entity_id"], r["expanded"]["distance"]) for r in two[1:]]
    assert [d for _, d in distances] == sorted(d for _, d in distances)
    assert ("supplier:s1", 2) in distances
    passage = {"kind": "passage", "passage_id": "psg_1"}
    assert await expand(world.graph, world.kb, T, [passage], 2) == [passage]


async def test_a_relation_to_itself_is_listed_once() -> None:
    world = World()
    await world.apply(
        record(
            "rec_p1",
            "part:p1",
            {"id": "p1", "replaces": "p1"},
            [ref("replaces", "replaces", "part", "p1")],
        )
    )
    walk = await world.graph.walk(T, "part:p1", "both", None, 2)
    assert [(e.direction, e.other) for e in walk.edges] == [("out", "part:p1")]


class Routes:
    """The internal relation routes over the supply chain in memory."""

    def __init__(self, world: World) -> None:
        self.app = FastAPI()
        accept_internal_calls(self.app)
        install_problem_handlers(self.app)
        for router in ROUTERS:
            self.app.include_router(router)
        resolutions = Resolutions(world.kb, None, StagedEvents())
        install(self.app, EnrichmentDeps(world.kb, resolutions, graph=world.graph))

    async def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        transport = httpx.ASGITransport(app=self.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://enrichment") as client:
            return await client.request(
                method, f"/internal/v1/knowledge{path}", headers=internal_headers(T), **kwargs
            )


async def test_the_routes_answer_pages_paths_and_their_refusals() -> None:
    routes = Routes(await supply_chain())
    listed = await routes.call(
        "GET", "/entities/supplier:s1/relations", params={"direction": "in", "limit": 1}
    )
    assert listed.status_code == 200, listed.text
    assert len(listed.json()["relations"]) == 1 and listed.json()["next_cursor"]
    entity = await routes.call("GET", "/entities/supplier:s1")
    assert entity.status_code == 200 and entity.json()["entity_id"] == "supplier:s1"
    path = await routes.call("POST", "/paths", json={"from": "supplier:s1", "to": "carrier:c2"})
    assert path.status_code == 200 and path.json()["length"] == 2
    refusals = [
        await routes.call("GET", "/entities/supplier:s1/relations", params={"depth": 4}),
        await routes.call("GET", "/entities/supplier:s1/relations", params={"cursor": "x"}),
        await routes.call("GET", "/entities/supplier:s1/relations", params={"direction": "up"}),
        await routes.call("POST", "/paths", json={"from": "supplier:s1", "to": "x", "via": 1}),
        await routes.call("POST", "/paths", json={"from": "a", "to": "b", "max_depth": 5}),
    ]
    assert [r.status_code for r in refusals] == [422] * 5
    missing = [
        await routes.call("GET", "/entities/carrier:c9/relations"),
        await routes.call("POST", "/paths", json={"from": "supplier:s1", "to": "carrier:c9"}),
    ]
    assert [r.status_code for r in missing] == [404, 404]


async def test_a_single_relation_contradicts_even_where_the_type_lists_other_single_values() -> (
    None
):
    world = await supply_chain()
    fix = record(
        "rec_fix",
        "shipment:sh1",
        {"id": "sh1", "carrier_id": "c2"},
        [ref("carrier_id", "carried_by", "carrier", "c2")],
    )
    defined = fix.payload.model_copy(
        update={
            "type_definition": TypeDefinition(origin="tenant", version=1, single_valued=["name"])
        }
    )
    await world.apply(fix.model_copy(update={"payload": defined}))
    carried = {(o, status) for s, p, o, status in world.edges() if p == "carried_by"}
    assert ("carrier:c2", "contested") in carried and ("carrier:c1", "contested") in carried


def dated(record_id: str, carrier: str, start: str, minute: int) -> Envelope[Any]:
    event = shipment(record_id, "sh1", "s1", carrier)
    valid_from = datetime.fromisoformat(f"{start}T00:00:00+00:00")
    payload = event.payload.model_copy(update={"valid_from": valid_from, "observed_at": at(minute)})
    return new_event(RECORD_UPSERTED, payload, tenant_id=T)


async def test_a_later_carrier_closes_the_earlier_and_walks_read_it_in_time() -> None:
    world = World()
    world.graph = RelationGraph(world.rows, entities=world.kb, schema=Schema())
    await world.apply(
        dated("rec_jan", "c1", "2026-01-01", 0), dated("rec_mar", "c2", "2026-03-01", 10)
    )
    assert ("shipment:sh1", "carried_by", "carrier:c1", "superseded") in world.edges()

    async def carriers(**when: Any) -> list[tuple[str, str]]:
        page = await world.graph.relations(
            T,
            "shipment:sh1",
            direction="out",
            predicate="carried_by",
            depth=1,
            limit=10,
            cursor=None,
            when=When(**when),
        )
        return [(r["to"], r["status"]) for r in page["relations"]]

    assert await carriers() == [("carrier:c2", "active")]
    feb = datetime(2026, 2, 1, tzinfo=UTC)
    assert await carriers(valid_at=feb) == [("carrier:c1", "active")]
    assert await carriers(as_of=at(5)) == [("carrier:c1", "active")]
    assert await carriers(valid_at=datetime(2025, 1, 1, tzinfo=UTC)) == []
