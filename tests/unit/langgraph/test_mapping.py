"""How store operations become client calls, and memories become items (fake client)."""

from __future__ import annotations

import json

import pytest
from langgraph.store.base import InvalidNamespaceError

from engram_client import NotFound
from engram_langgraph import EngramStore, MemoryNotStored
from engram_langgraph.filters import keeps, pushdown, scalar_fields
from tests.unit.langgraph.fake_engram import AsyncFakeEngram, FakeEngram

pytestmark = pytest.mark.unit


@pytest.fixture
def engram() -> FakeEngram:
    return FakeEngram()


def test_a_put_is_one_memory_scoped_by_the_namespace(engram: FakeEngram) -> None:
    store = EngramStore(engram, wait_timeout=7.5)
    value = {"text": "Ada likes tea", "n": 2, "lg_x": "kept out", "bad key": 1, "obj": {"a": 1}}
    store.put(("agt_a", "u_1", "s_1", "notes"), "pref", value)
    [write] = engram.called("write_memory")
    assert write["agent_id"] == "agt_a"
    assert (write["user_id"], write["session_id"]) == ("u_1", "s_1")
    assert write["type"] == "langgraph" and write["allow_duplicate"] is True
    assert json.loads(write["content"]) == value
    metadata = write["metadata"]
    assert json.loads(metadata["lg_value"]) == value
    assert metadata["lg_key"] == "pref"
    assert metadata["lg_ns"] == "agt_a.u_1.s_1.notes"
    assert [metadata[f"lg_ns_{i}"] for i in range(4)] == ["agt_a", "u_1", "s_1", "notes"]
    assert metadata["text"] == "Ada likes tea" and metadata["n"] == 2
    assert not {"lg_x", "bad key", "obj", "lg_created_at"} & set(metadata)
    [wait] = engram.called("wait_for_memory")
    assert wait["timeout"] == 7.5


def test_a_replacement_is_written_and_stored_before_the_old_memory_goes(
    engram: FakeEngram,
) -> None:
    store = EngramStore(engram)
    store.put(("agt_a",), "k", {"v": 1})
    first = store.get(("agt_a",), "k")
    engram.calls.clear()
    store.put(("agt_a",), "k", {"v": 2})
    order = [name for name, _ in engram.calls]
    assert order == ["list_memories", "write_memory", "wait_for_memory", "delete_memory"]
    metadata = engram.called("write_memory")[0]["metadata"]
    assert first is not None and metadata["lg_created_at"] == first.created_at.isoformat()


def test_a_rejected_write_raises_and_keeps_the_old_value(engram: FakeEngram) -> None:
    store = EngramStore(engram)
    store.put(("agt_a",), "k", {"v": 1})
    engram.reject_next = True
    with pytest.raises(MemoryNotStored, match="rejected"):
        store.put(("agt_a",), "k", {"v": 2})
    item = store.get(("agt_a",), "k")
    assert item is not None and item.value == {"v": 1}


def test_no_wait_when_the_timeout_is_zero(engram: FakeEngram) -> None:
    EngramStore(engram, wait_timeout=0).put(("agt_a",), "k", {"v": 1})
    assert engram.called("wait_for_memory") == []


def test_a_configured_agent_stands_for_the_root_label(engram: FakeEngram) -> None:
    store = EngramStore(engram, agents={"memories": "agt_b"})
    store.put(("memories", "u_1"), "k", {"v": 1})
    assert engram.called("write_memory")[0]["agent_id"] == "agt_b"
    item = store.get(("memories", "u_1"), "k")
    assert item is not None and item.namespace == ("memories", "u_1")


def test_indexed_fields_make_the_content_and_it_is_cut_to_the_limit(engram: FakeEngram) -> None:
    store = EngramStore(engram, index_fields=["title", "tags[*]"], max_content_chars=12)
    store.put(("agt_a",), "k", {"title": "Zebras", "tags": ["run", "fast"], "body": "no"})
    store.put(("agt_a",), "j", {"body": "no title"})
    store.put(("agt_a",), "i", {"title": "T", "body": "b"}, index=["body"])
    contents = [w["content"] for w in engram.called("write_memory")]
    assert contents == ["Zebras\nrun\nf", '{"body": "no', "b"]


def test_a_query_recalls_hybrid_without_a_floor_and_a_filter_is_pushed_down(
    engram: FakeEngram,
) -> None:
    store = EngramStore(engram)
    store.search(("agt_a", "u_1"), query="tea", limit=3, offset=2)
    store.search(("agt_a",), query="tea", filter={"color": "red", "n": {"$gt": 1, "$ne": 4}})
    plain, filtered = engram.called("recall")
    assert plain["mode"] == "hybrid" and plain["min_score"] == -1.0 and plain["top_k"] == 5
    assert plain["filter"]["user_id"] == "u_1"
    assert plain["filter"]["metadata"]["lg_ns_1"] == "u_1"
    assert filtered["top_k"] == 100
    assert filtered["filter"]["metadata"]["color"] == "red"
    assert filtered["filter"]["metadata"]["n"] == {"gte": 1}


def test_a_query_needs_an_agent_and_unknown_agents_read_as_empty(engram: FakeEngram) -> None:
    store = EngramStore(engram)
    with pytest.raises(ValueError, match="prefix"):
        store.search((), query="tea")
    assert store.search(("agt_zzz",), query="tea") == []
    assert store.get(("agt_zzz",), "k") is None
    with pytest.raises(NotFound):
        store.put(("agt_zzz",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("agt_a", "x" * 300), "k", {"v": 1})


def test_search_with_an_empty_prefix_lists_every_agent(engram: FakeEngram) -> None:
    store = EngramStore(engram)
    store.put(("agt_a",), "k", {"v": 1})
    store.put(("agt_b",), "k", {"v": 2})
    assert sorted(i.value["v"] for i in store.search(())) == [1, 2]


def test_list_namespaces_walks_the_caller_s_store_memories_once(engram: FakeEngram) -> None:
    store = EngramStore(engram)
    store.put(("agt_a", "u"), "k", {"v": 1})
    store.put(("agt_b",), "k", {"v": 1})
    engram.write_memory("agt_a", "not from the store")
    engram.calls.clear()
    assert store.list_namespaces() == [("agt_a", "u"), ("agt_b",)]
    [listing] = engram.called("list_memories")
    assert listing["agent_id"] is None and listing["status"] == "active"
    assert listing["filter"] == {"metadata": {"lg_key": {"exists": True}}}


def test_pushdown_keeps_only_what_engram_compares_like_langgraph() -> None:
    wanted = {
        "s": "x",
        "i": 3,
        "f": 0.5,
        "b": True,
        "r": {"$gte": 1, "$lt": 2.5},
        "ne": {"$ne": 1},
        "nested": {"a": 1},
        "lst": [1],
        "lg_key": "k",
        "long": "y" * 300,
    }
    assert pushdown(wanted) == {"s": "x", "i": 3, "b": True, "r": {"gte": 1, "lte": 2.5}}


def test_the_local_check_follows_langgraph_semantics() -> None:
    value = {"n": 3, "meta": {"lang": "en"}, "tags": ["a"], "s": "x"}
    assert keeps(value, {"n": {"$gt": 2, "$lte": 3}, "meta": {"lang": "en"}, "tags": ["a"]})
    assert not keeps(value, {"n": {"$ne": 3}})
    assert not keeps(value, {"missing": {"$gt": 1}})
    assert not keeps(value, {"s": {"$gt": 1}})
    assert keeps(value, {"missing": None})


async def test_a_store_without_the_matching_client_says_so(engram: FakeEngram) -> None:
    with pytest.raises(ValueError):
        EngramStore()
    with pytest.raises(RuntimeError, match="no async client"):
        await EngramStore(engram).aget(("agt_a",), "k")
    with pytest.raises(RuntimeError, match="no blocking client"):
        EngramStore(async_client=AsyncFakeEngram(engram)).get(("agt_a",), "k")


def test_while_a_put_replaces_an_item_reads_see_only_its_newest_version(
    engram: FakeEngram,
) -> None:
    store = EngramStore(engram, wait_timeout=0)
    store.put(("agt_a",), "k", {"text": "tea v1"})
    store.put(("agt_a",), "k", {"text": "tea v2"})
    for memory in engram.memories.values():
        memory.status = "active"
    item = store.get(("agt_a",), "k")
    assert item is not None and item.value == {"text": "tea v2"}
    assert [i.value for i in store.search(("agt_a",))] == [{"text": "tea v2"}]
    assert [i.value for i in store.search(("agt_a",), query="tea")] == [{"text": "tea v2"}]


def test_numbers_metadata_cannot_hold_stay_in_the_value_only() -> None:
    value = {"ok": 2**63 - 1, "big": 2**70, "nan": float("nan"), "inf": float("inf"), "r": 0.5}
    assert scalar_fields(value) == {"ok": 2**63 - 1, "r": 0.5}
