"""Issue 42's relations and time: suppliers, warehouses, shipments and carriers linked by
declared reference fields, walked and pruned through the gateway, and carriers' rates that
change over time, read as true then (`valid_at`) and as known then (`as_of`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Infra
from tests.e2e.test_prune_cascade import upload, wait_for_job
from tests.support.platform import Platform, start_platform, stop_platform
from tests.support.polling import until
from tests.support.tenants import create_tenant

SUPPLY = Path(__file__).resolve().parent.parent / "fixtures" / "supply"


@pytest.fixture(scope="module")
def platform(infra: Infra, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """The platform with the supply chain's record types declared to extraction."""
    running = start_platform(
        infra,
        tmp_path_factory.mktemp("platform"),
        ENGRAM_EXTRACTION_SCHEMA_PATH=str(SUPPLY / "types.json"),
    )
    try:
        yield running
    finally:
        stop_platform(running)


def send(client: httpx.Client, name: str) -> str:
    """Upload one fixture file as a document and wait for its extraction."""
    return upload(client, name, (SUPPLY / name).read_text(encoding="utf-8"))


def relations(client: httpx.Client, entity: str, **params: Any) -> list[dict[str, Any]]:
    """Every relation of the entity the listing pages through (empty for a 404)."""
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        response = client.get(f"/v1/knowledge/entities/{entity}/relations", params=query)
        if response.status_code == 404:
            return found
        assert response.status_code == 200, response.text
        body = response.json()
        found += body["relations"]
        cursor = body["next_cursor"]
        if cursor is None:
            return found


def edges(rows: list[dict[str, Any]]) -> set[tuple[str, str, str, bool]]:
    """(from, predicate, to, resolved) of each listed relation."""
    return {(r["from"], r["predicate"], r["to"], r["resolved"]) for r in rows}


def test_relations_traversal_paths_contradiction_and_pruning(platform: Platform) -> None:
    with platform.client(create_tenant(platform.env, "supply")) as client:
        send(client, "suppliers.csv")
        send(client, "warehouses.csv")
        shipments = send(client, "shipments.csv")

        # A reference to an entity not known yet is kept, unresolved.
        out = until(
            lambda: edges(relations(client, "shipment:sh1", direction="out")),
            "shipment sh1's relations",
            ready=lambda found: len(found) == 3,
        )
        assert out == {
            ("shipment:sh1", "supplied_by", "supplier:s1", True),
            ("shipment:sh1", "delivered_to", "warehouse:w1", True),
            ("shipment:sh1", "carried_by", "carrier:c1", False),
        }
        assert client.get("/v1/knowledge/entities/carrier:c1/relations").status_code == 404

        send(client, "carriers.csv")
        until(
            lambda: (
                ("shipment:sh1", "carried_by", "carrier:c1", True)
                in edges(relations(client, "shipment:sh1", direction="out"))
            ),
            "the carrier reference resolved",
        )

        # Both directions, and a list-valued reference.
        into_s1 = edges(relations(client, "supplier:s1", direction="in"))
        assert into_s1 == {
            ("supplier:s1", "supplied_by", "shipment:sh1", True),
            ("supplier:s1", "supplied_by", "shipment:sh2", True),
        }
        into_c1 = edges(relations(client, "carrier:c1", direction="in"))
        assert into_c1 == {
            ("carrier:c1", "carried_by", "shipment:sh1", True),
            ("carrier:c1", "served_by", "warehouse:w1", True),
        }
        served = relations(client, "warehouse:w1", direction="out")
        assert {(r["to"], r["status"]) for r in served} == {
            ("carrier:c1", "active"),
            ("carrier:c2", "active"),
        }

        # Two hops: supplier → its shipments → their carriers.
        two = relations(client, "supplier:s1", direction="both", depth=2, limit=2)
        hop2 = {(r["from"], r["predicate"], r["to"]) for r in two if r["depth"] == 2}
        assert {
            ("shipment:sh1", "carried_by", "carrier:c1"),
            ("shipment:sh2", "carried_by", "carrier:c3"),
        } <= hop2
        assert [r["depth"] for r in two] == sorted(r["depth"] for r in two)
        only = relations(client, "supplier:s1", direction="in", depth=2, predicate="supplied_by")
        assert {r["to"] for r in only} == {"shipment:sh1", "shipment:sh2"}
        bad = client.get("/v1/knowledge/entities/supplier:s1/relations", params={"depth": 4})
        assert bad.status_code == 422, bad.text
        unknown = client.get("/v1/knowledge/entities/supplier:s1/relations", params={"hops": 2})
        assert unknown.status_code == 422 and "hops" in unknown.text

        # A path from a supplier to a carrier, shortest first.
        found = client.post(
            "/v1/knowledge/paths", json={"from": "supplier:s1", "to": "carrier:c3", "max_depth": 3}
        )
        assert found.status_code == 200, found.text
        path = found.json()
        assert path["length"] == 2
        [first, *_] = path["paths"]
        assert [(e["from"], e["predicate"], e["to"], e["direction"]) for e in first["edges"]] == [
            ("supplier:s1", "supplied_by", "shipment:sh2", "in"),
            ("shipment:sh2", "carried_by", "carrier:c3", "out"),
        ]
        far = client.post(
            "/v1/knowledge/paths", json={"from": "supplier:s3", "to": "carrier:c3"}
        ).json()
        assert far["paths"] == []
        assert client.post("/v1/knowledge/paths", json={"from": "supplier:s1"}).status_code == 422

        # Knowledge search's `expand` follows a hit with its neighbours' facts.
        body = {"query": "Carpathia Logistics", "top_k": 1, "kinds": ["fact"], "expand": 1}
        expanded = until(
            lambda: client.post("/v1/knowledge/search", json=body).json().get("results", []),
            "a search hit on carrier c3 followed by its neighbours' facts",
            ready=lambda rows: (
                rows and rows[0]["entity_id"] == "carrier:c3" and any("expanded" in r for r in rows)
            ),
        )
        assert {r["entity_id"] for r in expanded[1:]} <= {"shipment:sh2", "warehouse:w2"}
        assert all(r["expanded"]["distance"] == 1 for r in expanded[1:])

        # A single-valued relation with two targets is a contradiction.
        send(client, "shipment_corrections.csv")
        carried = until(
            lambda: [
                r
                for r in relations(client, "shipment:sh1", direction="out")
                if r["predicate"] == "carried_by"
            ],
            "both carriers of sh1 contested",
            ready=lambda rows: len(rows) == 2 and all(r["status"] == "contested" for r in rows),
        )
        assert {r["to"] for r in carried} == {"carrier:c1", "carrier:c2"}
        open_ones = client.get(
            "/v1/knowledge/contradictions", params={"entity_id": "shipment:sh1", "status": "open"}
        ).json()["contradictions"]
        assert [c["attribute"] for c in open_ones] == ["carrier_id"]

        # The entity's article links its relations.
        article = client.get("/v1/knowledge/entities/shipment:sh1").json()["article"]
        assert "(/v1/knowledge/entities/supplier:s1)" in article

        # Pruning the shipments document takes every relation it alone supported.
        started = client.delete(f"/v1/documents/{shipments}")
        assert started.status_code == 202, started.text
        job = wait_for_job(client, started.json()["prune_job_id"])
        assert job["verified_empty"] is True, (job["verification"], job["counts"])
        assert job["verification"]["references"]["enrichment"]["relations"] == 0
        assert relations(client, "supplier:s1") == []
        assert client.get("/v1/knowledge/entities/shipment:sh2/relations").status_code == 404
        assert edges(relations(client, "carrier:c3", direction="in")) == {
            ("carrier:c3", "served_by", "warehouse:w2", True)
        }
        left = relations(client, "shipment:sh1", direction="out")
        assert [(r["predicate"], r["to"], r["status"]) for r in left] == [
            ("carried_by", "carrier:c2", "active")
        ]


def test_a_tenant_type_declares_references_through_the_types_api(platform: Platform) -> None:
    with platform.client(create_tenant(platform.env, "typed")) as client:
        bad = {
            "id_fields": ["id"],
            "required_fields": ["id"],
            "references": [{"field": "id", "to": "x", "predicate": "p"}],
        }
        refused = client.put("/v1/schema/types/order", json=bad)
        assert refused.status_code == 422 and "cannot be references" in refused.text
        declared = {
            "id_fields": ["id"],
            "required_fields": ["id"],
            "single_valued": ["status"],
            "references": [
                {"field": "customer", "to": "customer", "predicate": "ordered_by"},
                {"field": "items", "to": "product", "predicate": "contains", "many": True},
            ],
        }
        put = client.put("/v1/schema/types/order", json=declared)
        assert put.status_code == 200, put.text
        upload(client, "orders.csv", "id,customer,items,status\no1,k1,p1;p2,open\n")
        found = until(
            lambda: edges(relations(client, "order:o1", direction="out")),
            "the order's relations",
            ready=lambda rows: len(rows) == 3,
        )
        assert found == {
            ("order:o1", "ordered_by", "customer:k1", False),
            ("order:o1", "contains", "product:p1", False),
            ("order:o1", "contains", "product:p2", False),
        }


def rates(client: httpx.Client, entity: str, **params: str) -> dict[str, dict[str, Any]]:
    """The entity's `rate_per_kg` facts by value, read at the times given."""
    response = client.get(f"/v1/knowledge/entities/{entity}", params=params)
    if response.status_code == 404:
        return {}
    assert response.status_code == 200, response.text
    return {f["value"]: f for f in response.json()["facts"] if f["attribute"] == "rate_per_kg"}


def open_contradictions(client: httpx.Client, entity: str) -> list[dict[str, Any]]:
    """The entity's open contradictions."""
    query = {"entity_id": entity, "status": "open"}
    response = client.get("/v1/knowledge/contradictions", params=query)
    found: list[dict[str, Any]] = response.json()["contradictions"]
    return found


def test_rates_change_over_time_and_reads_see_then(platform: Platform) -> None:
    with platform.client(create_tenant(platform.env, "rates")) as client:
        send(client, "carriers.csv")
        january = send(client, "carrier_rates_2026_01.csv")
        until(lambda: rates(client, "carrier:c1"), "c1's January rate", ready=bool)
        between = datetime.now(UTC).isoformat()
        time.sleep(0.05)
        march = send(client, "carrier_rates_2026_03.csv")

        # The March rate closes January's period: a time slice, not a contradiction.
        now = until(
            lambda: rates(client, "carrier:c1"),
            "January's rate closed by March's",
            ready=lambda found: found.get("1.20", {}).get("status") == "superseded",
        )
        assert now["1.35"]["status"] == "active"
        assert now["1.35"]["valid_from"].startswith("2026-03-01")
        assert now["1.20"]["valid_from"].startswith("2026-01-01")
        assert now["1.20"]["valid_to"].startswith("2026-03-01")
        assert now["1.20"]["superseded_by"] == now["1.35"]["fact_id"]
        assert open_contradictions(client, "carrier:c1") == []

        # valid_at: what was true then; as_of: what Engram knew then.
        assert set(rates(client, "carrier:c1", valid_at="2026-02-01")) == {"1.20"}
        assert set(rates(client, "carrier:c1", valid_at="2026-03-01T00:00:00Z")) == {"1.35"}
        assert set(rates(client, "carrier:c1", valid_at="2026-04-15")) == {"1.35"}
        assert rates(client, "carrier:c1", valid_at="2025-12-31") == {}
        then = rates(client, "carrier:c1", as_of=between)
        assert set(then) == {"1.20"} and then["1.20"]["status"] == "active"
        assert then["1.20"]["valid_to"] is None
        assert set(rates(client, "carrier:c1", as_of=between, valid_at="2026-04-15")) == {"1.20"}
        assert set(rates(client, "carrier:c2", valid_at="2026-04-15")) == {"0.95"}

        # Search reads in time too: January's rate is the hit true in February.
        def searched(**when: str) -> list[str]:
            body = {"query": "carrier:c1 rate_per_kg", "top_k": 20, "min_score": -1.0, **when}
            response = client.post("/v1/knowledge/search", json={**body, "kinds": ["fact"]})
            assert response.status_code == 200, response.text
            rows = response.json()["results"]
            return [
                r["value"]
                for r in rows
                if r["entity_id"] == "carrier:c1" and r["attribute"] == "rate_per_kg"
            ]

        until(lambda: searched(), "March's rate searchable", ready=lambda v: v == ["1.35"])
        assert searched(valid_at="2026-02-01") == ["1.20"]
        assert searched(as_of=between) == ["1.20"]
        bad_search = client.post(
            "/v1/knowledge/search", json={"query": "rate", "valid_at": "last week"}
        )
        assert bad_search.status_code == 422 and "valid_at" in bad_search.text

        # An earlier period arriving late is closed by the later one already known.
        send(client, "carrier_rates_2025_10.csv")
        c2 = until(
            lambda: rates(client, "carrier:c2"),
            "October's late rate closed by January's",
            ready=lambda found: found.get("0.90", {}).get("status") == "superseded",
        )
        assert c2["0.95"]["status"] == "active"
        assert c2["0.90"]["valid_to"].startswith("2026-01-01")
        assert set(rates(client, "carrier:c2", valid_at="2025-11-01")) == {"0.90"}
        assert open_contradictions(client, "carrier:c2") == []

        # Relations read in time the same way: March's hub closed January's.
        def hub(**when: str) -> list[tuple[str, str]]:
            return [(r["to"], r["status"]) for r in relations(client, "carrier:c1", **when)]

        assert hub() == [("warehouse:w2", "active")]
        assert hub(valid_at="2026-02-01") == [("warehouse:w1", "active")]
        assert hub(as_of=between) == [("warehouse:w1", "active")]
        assert hub(as_of=between, valid_at="2026-04-01") == [("warehouse:w1", "active")]
        assert hub(valid_at="2025-06-01") == []
        bad = client.get("/v1/knowledge/entities/carrier:c1/relations", params={"as_of": "soon"})
        assert bad.status_code == 422 and "as_of" in bad.text
        before = client.get("/v1/knowledge/entities/carrier:c1", params={"as_of": "2020-01-01"})
        assert before.status_code == 404
        bad = client.get("/v1/knowledge/entities/carrier:c1", params={"valid_at": "yesterday"})
        assert bad.status_code == 422 and "valid_at" in bad.text
        bad = client.get("/v1/knowledge/entities/carrier:c1", params={"as_of": "2026-13-01"})
        assert bad.status_code == 422 and "as_of" in bad.text
        unknown = client.get("/v1/knowledge/entities/carrier:c1", params={"valid_on": "2026"})
        assert unknown.status_code == 422 and "valid_on" in unknown.text

        # A different rate over the same period is a contradiction; January stays closed.
        disputed = send(client, "carrier_rates_disputed.csv")
        found = until(
            lambda: open_contradictions(client, "carrier:c1"),
            "March's two rates contested",
            ready=bool,
        )
        assert [c["attribute"] for c in found] == ["rate_per_kg"]
        contested = rates(client, "carrier:c1")
        assert {v: f["status"] for v, f in contested.items()} == {
            "1.20": "superseded",
            "1.35": "contested",
            "1.40": "contested",
        }
        assert rates(client, "carrier:c3") == {}, "a row whose date is not a date is rejected"

        # Pruning takes the slices a document supported, and nothing else.
        for document in (disputed, march):
            started = client.delete(f"/v1/documents/{document}")
            assert started.status_code == 202, started.text
            job = wait_for_job(client, started.json()["prune_job_id"])
            assert job["verified_empty"] is True, (job["verification"], job["counts"])
        left = until(
            lambda: rates(client, "carrier:c1"),
            "January's rate open again",
            ready=lambda found: set(found) == {"1.20"},
        )
        assert left["1.20"]["status"] == "active" and left["1.20"]["valid_to"] is None
        assert hub() == [("warehouse:w1", "active")]
        assert open_contradictions(client, "carrier:c1") == []
        started = client.delete(f"/v1/documents/{january}")
        job = wait_for_job(client, started.json()["prune_job_id"])
        assert job["verified_empty"] is True, (job["verification"], job["counts"])
        assert rates(client, "carrier:c1", valid_at="2026-02-01") == {}
        assert rates(client, "carrier:c1") == {}
        assert hub(valid_at="2026-02-01") == []
