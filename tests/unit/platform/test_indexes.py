"""The index checker's rules, index creation (a refused TTL falls back to a sweep), the platform's
own queries held to its declared indexes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.errors import OperationFailure

from engram_events import new_event
from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.payloads.memories import MemoryWriteRequested
from engram_platform import audit, idempotency, outbox
from engram_platform.audit import AuditLog, AuditQuery, Position
from engram_platform.consuming import parked_store
from engram_platform.consuming.parked_store import PARKED, MongoParkedInputs, to_doc
from engram_platform.consuming.parking import ParkingLot
from engram_platform.idempotency import APPLIED, AppliedEvents
from engram_platform.indexes import Expiry, ensure_indexes, merge, sweep_once
from engram_platform.outbox import LEASES, MARKERS, OUTBOX, Outbox, OutboxRelay
from engram_platform.query_shapes import ids_within, served_by, shape_of, tenant_of
from engram_platform.sending import KafkaSender
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

LISTING = IndexModel([("tenant_id", ASCENDING), ("agent_id", ASCENDING), ("created_at", ASCENDING)])


def shape(query: dict[str, Any], sort: list[tuple[str, int]] | None = None) -> Any:
    return shape_of("memories", query, sort or [])


def test_equality_fields_in_any_order_then_the_sort_are_served() -> None:
    query = {"agent_id": "a", "tenant_id": "t"}
    assert served_by(shape(query, [("created_at", ASCENDING)]), [LISTING]) is LISTING
    assert served_by(shape(query, [("created_at", DESCENDING)]), [LISTING]) is LISTING


def test_a_sort_not_right_after_the_equality_prefix_is_not_served() -> None:
    assert served_by(shape({"tenant_id": "t"}, [("created_at", ASCENDING)]), [LISTING]) is None
    assert served_by(shape({"tenant_id": "t", "agent_id": "a"}, [("name", 1)]), [LISTING]) is None


def test_conditions_beyond_the_index_need_it_to_narrow_below_the_tenant() -> None:
    assert served_by(shape({"tenant_id": "t", "agent_id": "a", "user_id": "u"}), [LISTING])
    assert served_by(shape({"tenant_id": "t", "user_id": "u"}), [LISTING]) is None
    assert served_by(shape({"tenant_id": "t"}), [LISTING]) is LISTING


def test_a_range_after_the_prefix_is_served_and_keyset_conditions_count_as_ranges() -> None:
    ranged = shape({"tenant_id": "t", "agent_id": "a", "created_at": {"$lt": 1}})
    assert served_by(ranged, [LISTING]) is LISTING
    keyset = {
        "$and": [
            {"tenant_id": "t", "agent_id": {"$in": ["a", "b"]}},
            {"$or": [{"created_at": {"$gt": 1}}, {"created_at": 1, "memory_id": {"$gt": "m"}}]},
        ]
    }
    assert served_by(shape(keyset, [("created_at", ASCENDING)]), [LISTING]) is LISTING


def test_no_filter_is_a_scan_and_an_id_lookup_or_id_range_needs_no_index() -> None:
    assert served_by(shape({}), [LISTING]) is None
    assert served_by(shape({"_id": {"$in": ["t:1"]}, "tenant_id": "t"}), []) is not None
    id_range = shape({"_id": {"$gt": "t:", "$lt": "t;"}}, [("_id", ASCENDING)])
    assert served_by(id_range, []) is not None


def test_the_tenant_is_found_in_the_filter_or_inside_every_id() -> None:
    assert tenant_of({"$and": [{"tenant_id": "t"}, {"x": 1}]}) == "t"
    assert tenant_of({"_id": "t:1"}) is None
    assert ids_within({"_id": {"$gte": "t:", "$lt": "t;"}}, "t")
    assert ids_within({"_id": {"$in": ["t:1", "t:2"]}}, "t")
    assert not ids_within({"_id": {"$in": ["t:1", "u:2"]}}, "t")
    assert not ids_within({"_id": "agt_1"}, "t")


class IndexCollection:
    """`create_indexes` kept by name; `refuse_ttl` answers as FerretDB v1 does."""

    def __init__(self, name: str, refuse_ttl: bool) -> None:
        self.name = name
        self.refuse_ttl = refuse_ttl
        self.indexes: dict[str, dict[str, Any]] = {}
        self.deleted: list[dict[str, Any]] = []

    async def create_indexes(self, models: list[IndexModel]) -> list[str]:
        for model in models:
            doc = model.document
            if self.refuse_ttl and "expireAfterSeconds" in doc:
                raise OperationFailure("not implemented", code=238)
            known = self.indexes.get(doc["name"])
            if known is not None and known != doc:
                raise OperationFailure("options conflict", code=85)
        self.indexes.update({m.document["name"]: m.document for m in models})
        return [m.document["name"] for m in models]

    async def drop_index(self, name: str) -> None:
        del self.indexes[name]

    async def delete_many(self, query: dict[str, Any]) -> Any:
        self.deleted.append(query)
        return SimpleNamespace(deleted_count=3)


class IndexDatabase(dict[str, IndexCollection]):
    def __init__(self, refuse_ttl: bool) -> None:
        super().__init__()
        self.refuse_ttl = refuse_ttl

    def __missing__(self, name: str) -> IndexCollection:
        self[name] = IndexCollection(name, self.refuse_ttl)
        return self[name]


async def test_indexes_are_created_once_and_a_server_keeping_ttl_needs_no_sweep() -> None:
    db = IndexDatabase(refuse_ttl=False)
    declared = merge(idempotency.INDEXES, outbox.INDEXES)
    assert await ensure_indexes(db, declared) == []
    assert await ensure_indexes(db, declared) == []
    assert db[APPLIED].indexes["at_1"]["expireAfterSeconds"] == idempotency.APPLIED_KEPT_SECONDS
    assert list(db[OUTBOX].indexes) == ["order_1__id_1"]


async def test_a_refused_ttl_becomes_a_plain_index_and_an_expiry_to_sweep() -> None:
    db = IndexDatabase(refuse_ttl=True)
    expiries = await ensure_indexes(db, idempotency.INDEXES)
    assert expiries == [Expiry(APPLIED, "at", idempotency.APPLIED_KEPT_SECONDS)]
    assert "expireAfterSeconds" not in db[APPLIED].indexes["at_1"]
    now = datetime(2026, 12, 1, tzinfo=UTC)
    assert await sweep_once(db, expiries, now) == 3
    cutoff = now - timedelta(seconds=idempotency.APPLIED_KEPT_SECONDS)
    assert db[APPLIED].deleted == [{"at": {"$lt": cutoff}}]


async def test_an_index_redeclared_with_other_options_is_made_again() -> None:
    db = IndexDatabase(refuse_ttl=False)
    await ensure_indexes(db, {APPLIED: [IndexModel([("at", 1)], expireAfterSeconds=60)]})
    await ensure_indexes(db, idempotency.INDEXES)
    assert db[APPLIED].indexes["at_1"]["expireAfterSeconds"] == idempotency.APPLIED_KEPT_SECONDS


TENANT_FREE = {
    ("AppliedEvents.seen_many", APPLIED): "ids are `consumer:event_id`; event ids are unique "
    "across tenants and an input's tenant is unknown until it is decoded",
    ("Outbox.recover", MARKERS): "crash recovery reads every marker (a handful: a marker lives "
    "for the length of one write)",
    ("Outbox.recover", "memories"): "recovery moves events out of the documents its own marker "
    "named, by `_id`; the marker does not keep their tenant",
    ("Outbox.write_many_with_events", MARKERS): "the write's own marker, by its random `_id`",
    ("Outbox.write_many_with_events", "memories"): "moving the staged events out of the document "
    "just written, by `_id` (the write itself carries the caller's scope)",
    ("Outbox.rescan", OUTBOX): "the relay publishes every tenant's events in staging order",
    ("Outbox.next_parcels", OUTBOX): "a parcel holds many tenants' events",
    ("Outbox.mark_sent", OUTBOX): "a parcel holds many tenants' events",
    ("OutboxRelay._claim_lease", LEASES): "one lease per service, not per tenant",
}
UNINDEXED = {
    ("Outbox.recover", MARKERS): "every marker is read; there are only as many as writes in flight",
}


async def test_the_platform_queries_are_served_and_every_tenant_free_one_is_listed() -> None:
    db = RecordingDatabase(
        {
            MARKERS: [{"_id": "m1", "collection": "memories", "doc_ids": ["t:1"], "created": 0}],
            "memories": [{"_id": "t:1", "_outbox": {}}],
            OUTBOX: [],
        }
    )
    applied = AppliedEvents(db, "memory")
    box = Outbox(db)
    relay = OutboxRelay(box, sender=KafkaSender(), service="memory")
    event = new_event(
        MEMORY_WRITE_REQUESTED,
        MemoryWriteRequested(memory_id="m1", agent_id="a1", content="hi"),
        tenant_id="t",
    )
    box.queue.append("parcel-1")
    exercise: dict[str, Callable[[], Awaitable[Any]]] = {
        "AppliedEvents.seen_many": lambda: applied.seen_many(["e1"]),
        "AppliedEvents.mark_many": lambda: applied.mark_many([("e1", "x")]),
        "Outbox.write_many_with_events": lambda: box.write_many_with_events(
            db["memories"], [("t:1", {"$set": {"a": 1}}, [event])], scope={"tenant_id": "t"}
        ),
        "Outbox.recover": lambda: box.recover([db["memories"]]),
        "Outbox.rescan": box.rescan,
        "Outbox.next_parcels": box.next_parcels,
        "Outbox.mark_sent": lambda: box.mark_sent(["parcel-1"]),
        "OutboxRelay._claim_lease": relay._claim_lease,
        "AuditLog.record": lambda: log.record([]),
        "AuditLog.page": lambda: log.page("t", AuditQuery(limit=5)),
        "AuditLog.page+filters": lambda: log.page(
            "t",
            AuditQuery(
                limit=5,
                actions=("key.created", "key.revoked"),
                since=datetime(2026, 12, 1, tzinfo=UTC),
                until=datetime(2026, 12, 2, tzinfo=UTC),
                target="k1",
                before=Position(datetime(2026, 12, 2, tzinfo=UTC), "aud_1"),
            ),
        ),
    }
    log = AuditLog(db)
    await db.run(exercise)
    declared = merge(idempotency.INDEXES, outbox.INDEXES, audit.INDEXES)
    verdict = judge(db.calls, declared, tenant_id="t", unindexed=UNINDEXED, tenant_free=TENANT_FREE)
    assert not verdict.report(), verdict.report()
    assert public_methods(AppliedEvents) <= set(exercise)


PARKED_TENANT_FREE = {
    (f"MongoParkedInputs.{name}", PARKED): "a consumer's parked lane holds every tenant's inputs "
    "of its partitions, ordered by Kafka key; rows are read by event id or key"
    for name in ("places", "claim", "reschedule", "release", "delete", "holds")
}
PARKED_UNINDEXED = {
    ("MongoParkedInputs.places", PARKED): "the retrier reads the whole lane (ids, keys, offsets, "
    "due times: no bytes); it holds only inputs that failed transiently and their keys' followers",
}


async def test_the_parked_lane_queries_are_served_and_every_scan_is_listed() -> None:
    now = datetime.now(UTC)
    event = new_event(
        MEMORY_WRITE_REQUESTED,
        MemoryWriteRequested(memory_id="m1", agent_id="a1", content="hi"),
        tenant_id="t",
    )
    record = SimpleNamespace(
        topic="engram.memories.v1", partition=0, offset=3, key=b"a1", value=b"{}", headers=()
    )
    db = RecordingDatabase()
    store = MongoParkedInputs(db)
    parked = ParkingLot(store).row(record, event, status="waiting")
    db.rows[PARKED] = [to_doc(parked)]
    exercise: dict[str, Callable[[], Awaitable[Any]]] = {
        "MongoParkedInputs.park_many": lambda: store.park_many([parked]),
        "MongoParkedInputs.places": store.places,
        "MongoParkedInputs.claim": lambda: store.claim(parked.event_id, now, now),
        "MongoParkedInputs.reschedule": lambda: store.reschedule(
            parked.event_id, attempts=2, reason="RuntimeError", due=now
        ),
        "MongoParkedInputs.release": lambda: store.release(parked.event_id),
        "MongoParkedInputs.delete": lambda: store.delete(parked.event_id),
        "MongoParkedInputs.holds": lambda: store.holds(parked.key),
    }
    await db.run(exercise)
    verdict = judge(
        db.calls,
        parked_store.INDEXES,
        tenant_id="t",
        unindexed=PARKED_UNINDEXED,
        tenant_free=PARKED_TENANT_FREE,
    )
    assert not verdict.report(), verdict.report()
    assert public_methods(MongoParkedInputs) <= set(exercise)
