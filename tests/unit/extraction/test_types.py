"""Record types per tenant: what a declaration may say, which definition a source is extracted
with, versions, and the internal routes the gateway calls."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from engram_events import new_event
from engram_events.catalog import RECORD_UPSERTED, RECORDS_IMPORT_REQUESTED
from engram_events.payloads.records import RecordsImportRequested
from engram_extraction import api
from engram_extraction.adapters.mapping import lineage
from engram_extraction.api import ExtractionDeps
from engram_extraction.domain.records import Draft, Source
from engram_extraction.domain.schema import Declared, RecordSchema, SchemaRegistry
from engram_extraction.domain.types import BadDefinition, definition_of
from engram_extraction.service.documents import DocumentExtraction
from engram_extraction.service.imports import RecordImports
from engram_extraction.service.types import RecordTypes
from engram_platform.dependencies import install
from engram_platform.problems import install_problem_handlers
from tests.support.internal import accept_internal_calls, internal_headers
from tests.unit.extraction.fakes import (
    FakeOutbox,
    FakePassages,
    FakeStore,
    FakeTypeStore,
    ingested,
)

pytestmark = pytest.mark.unit
BUNDLED = SchemaRegistry(
    [RecordSchema(name="contact", id_fields=("email",), required_fields=("email",))], version=3
)


def locs(body: Any, name: str = "order") -> list[list[str]]:
    with pytest.raises(BadDefinition) as caught:
        definition_of(name, body)
    return [e["loc"] for e in caught.value.errors]


def test_a_definition_is_checked_by_the_model_records_are_built_with() -> None:
    schema = definition_of("order", {"id_fields": ["no"], "required_fields": ["no", "customer"]})
    assert schema == RecordSchema(
        name="order", id_fields=("no",), required_fields=("no", "customer")
    )
    assert definition_of("order", {"name": "order"}).single_valued is None


def test_bad_definitions_name_the_field() -> None:
    assert locs({"id_field": ["no"]}) == [["id_field"]]
    assert locs({"required_fields": "no"}) == [["required_fields"]]
    assert locs({}, name="Order") == [["name"]]
    assert locs({"name": "invoice"}) == [["name"]]
    assert locs({"id_fields": ["no"], "required_fields": ["customer"]}) == [["id_fields", "0"]]
    assert locs({"single_valued": ["status", "status"]}) == [["single_valued", "1"]]
    assert locs({"required_fields": [""]}) == [["required_fields", "0"]]
    assert locs(["no"]) == [[]]


async def test_a_tenant_declaration_replaces_the_bundled_type_and_retiring_it_restores_it() -> None:
    types = RecordTypes(FakeTypeStore(), BUNDLED)
    assert (await types.registry_for("tnt_a")).declaration("contact").origin == "bundled"  # type: ignore[union-attr]
    await types.declare(
        "tnt_a", "contact", {"id_fields": ["phone"], "required_fields": ["phone"]}, "k1"
    )
    mine = (await types.registry_for("tnt_a")).declaration("contact")
    assert mine is not None and (mine.origin, mine.version) == ("tenant", 1)
    assert mine.schema.id_fields == ("phone",)
    theirs = (await types.registry_for("tnt_b")).declaration("contact")
    assert theirs is not None and (theirs.origin, theirs.version) == ("bundled", 3)
    retired = await types.retire("tnt_a", "contact", "k1")
    assert retired is not None and retired["version"] == 2 and retired["retired"]
    assert retired["now"]["origin"] == "bundled"
    back = (await types.registry_for("tnt_a")).declaration("contact")
    assert back is not None and back.origin == "bundled"
    assert await types.retire("tnt_a", "contact", "k1") is None


async def test_versions_are_kept_and_each_can_be_read() -> None:
    types = RecordTypes(FakeTypeStore(), BUNDLED)
    await types.declare("tnt_a", "order", {"id_fields": ["no"], "required_fields": ["no"]}, "k1")
    await types.declare("tnt_a", "order", {"required_fields": ["no"]}, "k2")
    current = await types.get("tnt_a", "order")
    assert current is not None and current["version"] == 2 and current["changed_by"] == "k2"
    first = await types.get("tnt_a", "order", version=1)
    assert first is not None and first["definition"]["id_fields"] == ["no"]
    assert await types.get("tnt_a", "order", version=3) is None
    history = await types.versions("tnt_a", "order")
    assert history is not None and [v["version"] for v in history["versions"]] == [1, 2]
    assert history["bundled"] is None
    assert await types.get("tnt_b", "order") is None
    listed = await types.listing("tnt_a")
    assert [(t["name"], t["origin"]) for t in listed] == [
        ("contact", "bundled"),
        ("order", "tenant"),
    ]


async def test_a_change_applies_to_documents_extracted_after_it() -> None:
    store, outbox, type_store = FakeStore(), FakeOutbox(), FakeTypeStore()
    types = RecordTypes(type_store, BUNDLED)
    extraction = DocumentExtraction(store, types, outbox, passages=FakePassages())
    await extraction.extract(ingested(b"no,customer\n1,Acme\n", name="orders.csv"))
    (before,) = store.heads.values()
    assert before["entity_id"].startswith("order:")
    await types.declare(
        "tnt_a",
        "order",
        {"id_fields": ["customer"], "required_fields": ["customer"], "single_valued": ["no"]},
        "k1",
    )
    later = ingested(b"no,customer\n2,Globex\n3,\n", name="orders.csv")
    later = later.model_copy(
        update={"payload": later.payload.model_copy(update={"document_id": "doc_2"})}
    )
    events = await extraction.extract(later)
    after = [h for h in store.heads.values() if h["record_id"] != before["record_id"]]
    assert [h["entity_id"] for h in after] == ["order:Globex"]
    assert "missing required field(s): customer" in {r.reason for r in store.rejected}
    assert store.heads[before["record_id"]]["entity_id"] == before["entity_id"]
    (upserted,) = [e for e in events if e.event_type == RECORD_UPSERTED.name]
    definition = upserted.payload.type_definition
    assert definition is not None and definition.single_valued == ["no"]
    assert (definition.origin, definition.version) == ("tenant", 1)
    assert type_store.reads == 2


async def call(types: RecordTypes, method: str, path: str, **kwargs: Any) -> httpx.Response:
    app = FastAPI()
    accept_internal_calls(app)
    install_problem_handlers(app)
    app.include_router(api.types_router)
    install(app, ExtractionDeps(records=None, passages=None, types=types))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://extraction") as client:
        return await client.request(method, path, headers=internal_headers("tnt_a"), **kwargs)


async def test_the_internal_routes_declare_read_and_retire() -> None:
    types = RecordTypes(FakeTypeStore(), BUNDLED)
    base = "/internal/v1/schema/types"
    bad = await call(types, "PUT", f"{base}/order", json={"id_fields": ["no"], "colour": 1})
    assert bad.status_code == 422
    assert [e["loc"] for e in bad.json()["errors"]] == [["colour"]]
    bad = await call(types, "PUT", f"{base}/order", json={"name": "order", "id_fields": ["no"]})
    assert [e["loc"] for e in bad.json()["errors"]] == [["id_fields", "0"]]
    put = await call(
        types, "PUT", f"{base}/order", json={"required_fields": ["no"]}, params={"changed_by": "k1"}
    )
    assert put.status_code == 200 and put.json()["version"] == 1, put.text
    assert (await call(types, "GET", f"{base}/order")).json()["origin"] == "tenant"
    assert (await call(types, "GET", f"{base}/order", params={"version": 2})).status_code == 404
    assert (await call(types, "GET", f"{base}/order/versions")).status_code == 200
    assert (await call(types, "GET", f"{base}/invoice")).status_code == 404
    assert (await call(types, "DELETE", f"{base}/order")).status_code == 200
    assert (await call(types, "DELETE", f"{base}/order")).status_code == 404
    assert (await call(types, "GET", f"{base}/order")).status_code == 404
    listed = (await call(types, "GET", base)).json()["types"]
    assert [t["name"] for t in listed] == ["contact"]


def test_the_stored_lineage_names_the_definition_a_record_was_built_with() -> None:
    declared = Declared("tenant", 4, RecordSchema(name="order"))
    draft = Draft("r1", "order", "order:1", {"no": 1}, "ab" * 32, "row:2", declared=declared)
    source = Source("tnt_a", "doc_1", "order", document_id="doc_1")
    assert lineage(source, draft)["type_definition"] == {"origin": "tenant", "version": 4}
    assert "type_definition" not in lineage(source, Draft("r1", "order", "order:1", {}, "ab", "x"))


async def test_an_import_is_built_with_the_tenants_type() -> None:
    store, types = FakeStore(), RecordTypes(FakeTypeStore(), BUNDLED)
    await types.declare(
        "tnt_a", "contact", {"id_fields": ["phone"], "required_fields": ["phone"]}, None
    )
    rows = [{"email": "a@x.io", "phone": "111"}, {"email": "b@x.io"}]
    request = RecordsImportRequested(
        import_id="imp_1", source="crm", record_type="contact", rows=rows
    )
    imports = RecordImports(store, types, FakeOutbox())
    await imports.import_rows(new_event(RECORDS_IMPORT_REQUESTED, request, tenant_id="tnt_a"))
    assert [h["entity_id"] for h in store.heads.values()] == ["contact:111"]
    assert store.imports["imp_1"]["rejected_count"] == 1


async def test_a_declared_valid_from_field_dates_the_record_event() -> None:
    store, outbox, type_store = FakeStore(), FakeOutbox(), FakeTypeStore()
    types = RecordTypes(type_store, BUNDLED)
    declared = {"id_fields": ["id"], "required_fields": ["id"], "valid_from_field": "effective"}
    await types.declare("tnt_a", "rate", declared, "k1")
    extraction = DocumentExtraction(store, types, outbox, passages=FakePassages())
    text = b"id,price,effective\nr1,1.20,2026-01-01\nr2,1.35,soon\nr3,1.40,\n"
    events = await extraction.extract(ingested(text, name="rates.csv"))
    upserted = {
        e.payload.entity_id: e.payload.valid_from
        for e in events
        if e.event_type == RECORD_UPSERTED.name
    }
    assert upserted == {"rate:r1": datetime(2026, 1, 1, tzinfo=UTC), "rate:r3": None}
    assert "field 'effective' is not an ISO date or date-time" in {r.reason for r in store.rejected}
    with pytest.raises(BadDefinition, match="validity"):
        definition_of("rate", {**declared, "valid_from_field": "id"})
