"""The local Kafka and FerretDB start, serve real clients, are reused, and stop without a trace."""

import time
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from engram_devstack import FerretServer, KafkaServer, create_topics, port_open
from engram_devstack.processes import pid_alive

pytestmark = pytest.mark.integration


def _assert_gone(server: KafkaServer | FerretServer, pid: int) -> None:
    assert not pid_alive(pid)
    assert not server.pid_file.exists()
    assert not port_open(server.host, server.port)
    assert server.running_pid() is None


async def test_kafka_serves_an_idempotent_producer_and_a_group_consumer(kafka: KafkaServer) -> None:
    assert kafka.start() is True
    kafka.wait_ready(90)
    topic, compacted = f"devstack.{uuid.uuid4().hex}", f"devstack.c.{uuid.uuid4().hex}"

    created = await create_topics(kafka.address, [topic, compacted], {compacted})
    again = await create_topics(kafka.address, [topic, compacted], {compacted})
    assert sorted(created) == sorted([topic, compacted])
    assert again == []

    producer = AIOKafkaProducer(bootstrap_servers=kafka.address, enable_idempotence=True)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"hello", key=b"k")
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka.address,
        group_id=f"devstack-{uuid.uuid4().hex}",
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        message = await consumer.getone()
    finally:
        await consumer.stop()
    assert (message.key, message.value) == (b"k", b"hello")


def test_kafka_start_reuses_a_running_broker_and_stop_leaves_no_process(
    kafka: KafkaServer,
) -> None:
    kafka.start()
    kafka.wait_ready(90)
    pid = kafka.running_pid()
    assert pid is not None

    assert kafka.start() is False
    assert kafka.running_pid() == pid

    assert kafka.stop() is True
    _assert_gone(kafka, pid)
    assert kafka.stop() is False


def test_ferretdb_answers_pymongo_and_stop_leaves_no_process(ferret: FerretServer) -> None:
    pymongo = pytest.importorskip("pymongo")
    assert ferret.start() is True
    ferret.wait_ready(30)
    pid = ferret.running_pid()
    assert pid is not None
    assert ferret.start() is False

    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        assert client.admin.command("ping")["ok"] == 1.0
        collection = client.devstack_test.items
        collection.insert_one({"_id": "a", "n": 1})
        assert collection.find_one({"_id": "a"}) == {"_id": "a", "n": 1}

    assert ferret.stop() is True
    _assert_gone(ferret, pid)


def test_ferretdb_keeps_data_across_restarts(ferret: FerretServer) -> None:
    pymongo = pytest.importorskip("pymongo")
    ferret.start()
    ferret.wait_ready(30)
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        client.devstack_test.items.insert_one({"_id": "kept"})
    ferret.stop()

    ferret.start()
    ferret.wait_ready(30)
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        assert client.devstack_test.items.find_one({"_id": "kept"}) == {"_id": "kept"}


@pytest.mark.parametrize(
    "filter_",
    [
        {"_id": "k3"},
        {"_id": "k3", "tenant_id": "t"},
        {"_id": {"$in": ["k3", "k4"]}, "tenant_id": "t"},
    ],
)
def test_ferretdb_finds_by_id_through_the_index_and_still_applies_the_rest(
    ferret: FerretServer, filter_: dict[str, object]
) -> None:
    """Our patch: _id lookups use SQLite's _id index (unpatched, each one scanned the table)."""
    pymongo = pytest.importorskip("pymongo")
    ferret.start()
    ferret.wait_ready(30)
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        db = client.devstack_index
        db.items.insert_many(
            [{"_id": f"k{i}", "tenant_id": "t" if i != 4 else "u"} for i in range(20)]
        )
        plan = db.command("explain", {"find": "items", "filter": filter_})
        found = sorted(doc["_id"] for doc in db.items.find(filter_))
    assert plan["filterPushdown"] is True
    assert "USING INDEX" in " ".join(plan["queryPlanner"]["Plan"])
    assert found == ["k3"]


AWKWARD_IDS = ["t:a", "t:a b", "t:a!", 't:a"q', "t:a\\z", "t:a<", "t:a\u2028", "t:é", "t:b"]
"""String ids whose JSON text escapes or orders differently from the string itself."""


@pytest.mark.parametrize(
    ("filter_", "direction"),
    [
        ({"_id": {"$gt": "t:a", "$lt": "t;"}}, 1),
        ({"_id": {"$gte": "t:a", "$lte": "t:b"}}, 1),
        ({"_id": {"$gt": "t:a b"}}, -1),
        ({"_id": {"$lt": "t:a<"}}, 1),
        ({"_id": {"$gt": "t:a", "$lt": "t;"}, "n": {"$gte": 0}}, 1),
    ],
)
def test_ferretdb_id_ranges_are_exact_in_order_and_limited(
    ferret: FerretServer, filter_: dict[str, object], direction: int
) -> None:
    """Our second patch: an `_id` range sorted by `_id` is filtered, ordered and limited in
    SQLite; it must answer exactly what MongoDB would, with other _id types in the collection."""
    pymongo = pytest.importorskip("pymongo")
    bson = pytest.importorskip("bson")
    ferret.start()
    ferret.wait_ready(30)
    others: list[object] = [7, bson.ObjectId(), {"k": "t:a1"}, "s:z", "u:a"]
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        items = client.devstack_range.items
        items.insert_many([{"_id": i, "n": n} for n, i in enumerate([*AWKWARD_IDS, *others])])
        found = [doc["_id"] for doc in items.find(filter_).sort("_id", direction).limit(4)]
        every = [doc["_id"] for doc in items.find(filter_).sort("_id", direction)]
    bounds = filter_["_id"]
    assert isinstance(bounds, dict)
    checks = {
        "$gt": lambda s, b: s > b,
        "$gte": lambda s, b: s >= b,
        "$lt": lambda s, b: s < b,
        "$lte": lambda s, b: s <= b,
    }
    expected = sorted(
        (
            i
            for i in [*AWKWARD_IDS, "s:z", "u:a"]
            if all(checks[op](i.encode(), b.encode()) for op, b in bounds.items())
        ),
        key=str.encode,
        reverse=direction == -1,
    )
    assert every == expected
    assert found == expected[:4]


def test_ferretdb_answers_a_bulk_write_of_more_statements_than_its_connection_pool(
    ferret: FerretServer,
) -> None:
    """Our fourth patch: unpatched, each update statement held a pooled SQLite connection until
    the command ended, so a bulk write of ~100 versioned replaces never answered."""
    pymongo = pytest.importorskip("pymongo")
    ferret.start()
    ferret.wait_ready(30)
    count = 250
    payload = b"x" * 2000
    with pymongo.MongoClient(
        ferret.uri, serverSelectionTimeoutMS=5000, socketTimeoutMS=30000
    ) as client:
        items = client[f"devstack_bulk_{uuid.uuid4().hex[:8]}"].items
        items.insert_many([{"_id": f"k{i}", "version": 1} for i in range(count)])
        stale = {"_id": "k0", "version": 9}
        result = items.bulk_write(
            [pymongo.ReplaceOne(stale, {**stale, "payload": payload})]
            + [
                pymongo.ReplaceOne(
                    {"_id": f"k{i}", "version": 1},
                    {"_id": f"k{i}", "version": 2, "payload": payload},
                )
                for i in range(count)
            ],
            ordered=False,
        )
        versions = {doc["_id"]: doc["version"] for doc in items.find({}, {"version": 1})}
    assert result.matched_count == count
    assert versions == {f"k{i}": 2 for i in range(count)}


def test_ferretdb_bulk_write_statements_see_the_writes_before_them(ferret: FerretServer) -> None:
    """Our sixth patch holds statements' writes for one transaction: a later statement still
    sees what an earlier one wrote, whether it selects by that _id or by another field."""
    pymongo = pytest.importorskip("pymongo")
    ferret.start()
    ferret.wait_ready(30)
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        items = client[f"devstack_seen_{uuid.uuid4().hex[:8]}"].items
        items.insert_many([{"_id": "a", "version": 1}, {"_id": "b"}, {"_id": "c", "version": 1}])
        result = items.bulk_write(
            [
                pymongo.ReplaceOne({"_id": "a", "version": 1}, {"_id": "a", "version": 2}),
                pymongo.UpdateOne({"_id": "a", "version": 2}, {"$set": {"version": 3}}),
                pymongo.UpdateOne({"_id": "b"}, {"$set": {"tag": "x"}}),
                pymongo.UpdateOne({"tag": "x"}, {"$set": {"seen": True}}),
                pymongo.UpdateOne({"_id": "c", "version": 1}, {"$set": {"version": 2}}),
                pymongo.UpdateOne({"_id": "d"}, {"$set": {"n": 1}}, upsert=True),
                pymongo.UpdateOne({"_id": "d"}, {"$inc": {"n": 1}}),
            ]
        )
        stored = {doc.pop("_id"): doc for doc in items.find()}
    assert (result.matched_count, result.modified_count, result.upserted_count) == (6, 6, 1)
    assert stored == {
        "a": {"version": 3},
        "b": {"tag": "x", "seen": True},
        "c": {"version": 2},
        "d": {"n": 2},
    }


def test_ferretdb_update_many_writes_every_match_across_its_write_batches(
    ferret: FerretServer,
) -> None:
    """Our fifth patch writes an update's documents 500 per transaction: every matched document
    across the batch boundaries is written, and only those."""
    pymongo = pytest.importorskip("pymongo")
    ferret.start()
    ferret.wait_ready(30)
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        items = client[f"devstack_many_{uuid.uuid4().hex[:8]}"].items
        items.insert_many([{"_id": f"k{i:04d}", "n": i, "body": "x" * 100} for i in range(1234)])
        odd = items.update_many(
            {"n": {"$mod": [2, 1]}}, {"$set": {"odd": True}, "$unset": {"body": ""}}
        )
        again = items.update_many({"n": {"$mod": [2, 1]}}, {"$set": {"odd": True}})
        upserted = items.update_many({"_id": "new"}, {"$set": {"n": -1}}, upsert=True)
        found = items.find_one_and_update({"_id": "k0001"}, {"$inc": {"n": 1000}})
        stored = {doc["_id"]: doc for doc in items.find()}
    assert (odd.matched_count, odd.modified_count) == (617, 617)
    assert (again.matched_count, again.modified_count) == (617, 0)
    assert upserted.upserted_id == "new" and stored["new"]["n"] == -1
    assert found is not None and found["n"] == 1 and stored["k0001"]["n"] == 1001
    flagged = {key for key, doc in stored.items() if doc.get("odd")}
    assert flagged == {f"k{i:04d}" for i in range(1, 1234, 2)}
    assert all(
        ("body" in doc) == (key not in flagged) for key, doc in stored.items() if key != "new"
    )


def test_ferretdb_returns_stored_documents_exactly(ferret: FerretServer) -> None:
    """Our seventh patch decodes stored documents in one pass: every type, escape and nesting
    level reads back as written (the server refuses nested arrays), and a document read twice
    (its schema cached) is unchanged."""
    pymongo = pytest.importorskip("pymongo")
    bson = pytest.importorskip("bson")
    ferret.start()
    ferret.wait_ready(30)
    written = {
        "_id": 't:a"q\\z\u2028é',
        "plain": "abc",
        "empty": "",
        "escapes": 'quote " backslash \\ tab \t newline \n nul \x00 bell \a </script>',
        "unicode": "héllo 世界 😀",
        "int": -7,
        "int_max": 2**31 - 1,
        "long": 1234567890123,
        "long_min": -(2**63),
        "double": 3.5,
        "whole_double": 42.0,
        "true": True,
        "false": False,
        "none": None,
        "date": bson.datetime.datetime(2026, 12, 2, 14, 20, 33, 123000),
        "before_epoch": bson.datetime.datetime(1969, 12, 31, 0, 0, 0),
        "binary": bson.Binary(b"\x00\x01\xff", 128),
        "object_id": bson.ObjectId("0102030405060708090a0b0c"),
        "nested": {"s": "x", "a": ["y", 1, {"k": "v", "deep": [{"t": [True]}, {}]}], "empty": {}},
        "list": ["tnt:rec-1", 5, None, 2.25, {}, {"x": [1, "2"]}],
    }
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        items = client[f"devstack_docs_{uuid.uuid4().hex[:8]}"].items
        items.insert_one(written)
        first = items.find_one({"_id": written["_id"]})
        second = items.find_one({"_id": written["_id"]})
    assert first == written
    assert second == written
    assert isinstance(first["whole_double"], float) and isinstance(first["long"], int)


def test_ferretdb_in_over_many_strings_matches_exactly_the_listed_values(
    ferret: FerretServer,
) -> None:
    """Our eighth patch tests `$in` over many strings as a set: a listed string matches, a
    prefix or another type does not, an array field matches when any element is listed, and
    a list that mixes in other types still matches them."""
    pymongo = pytest.importorskip("pymongo")
    ferret.start()
    ferret.wait_ready(30)
    listed = [f"t:rec-{i:03d}" for i in range(0, 60, 2)]
    with pymongo.MongoClient(ferret.uri, serverSelectionTimeoutMS=5000) as client:
        items = client[f"devstack_in_{uuid.uuid4().hex[:8]}"].items
        items.insert_many(
            [{"_id": f"t:rec-{i:03d}", "ref": f"t:rec-{i:03d}", "n": i} for i in range(60)]
            + [
                {"_id": "prefix", "ref": "t:rec-00"},
                {"_id": "number", "ref": 7},
                {"_id": "array-in", "ref": ["x", "t:rec-010"]},
                {"_id": "array-out", "ref": ["x", "t:rec-011"]},
            ]
        )
        by_id = sorted(doc["_id"] for doc in items.find({"_id": {"$in": listed}}))
        by_ref = sorted(doc["_id"] for doc in items.find({"ref": {"$in": listed}}))
        mixed = sorted(doc["_id"] for doc in items.find({"ref": {"$in": [7, *listed]}}))
        combined = sorted(doc["_id"] for doc in items.find({"_id": {"$in": listed}, "n": 4}))
    assert by_id == sorted(listed)
    assert by_ref == sorted([*listed, "array-in"])
    assert mixed == sorted([*listed, "array-in", "number"])
    assert combined == ["t:rec-004"]


def test_second_ensure_installed_is_a_fast_no_op(kafka: KafkaServer, ferret: FerretServer) -> None:
    for server in (kafka, ferret):
        started = time.monotonic()
        result = server.ensure_installed()
        assert result.changed is False
        assert time.monotonic() - started < 1.0
