"""LangGraph's documented `BaseStore` contract as tests, for any backend behind `EngramStore`.

LangGraph ships no conformance suite, so this mirrors what `BaseStore`'s docstrings promise:
put then get, replace, delete (also as a None put), search with a query (scored) and without,
filters on value fields, namespace isolation, and list_namespaces with prefix, suffix,
max_depth and paging. A test module subclasses `StoreContract` / `AsyncStoreContract` and
provides the fixtures `store` / `astore` (an `EngramStore`), `agent` and `other_agent` (ids
of two agents of the caller, fresh for the test).
"""

from __future__ import annotations

from datetime import datetime

import pytest
from langgraph.store.base import InvalidNamespaceError, PutOp, SearchItem

from engram_langgraph import EngramStore


def _aware(when: datetime) -> bool:
    return when.tzinfo is not None and when.utcoffset() is not None


class StoreContract:
    """The blocking methods: put, get, search, delete, list_namespaces."""

    def test_put_then_get_returns_the_value_exactly(self, store: EngramStore, agent: str) -> None:
        value = {
            "text": "Ada prefers tea — no sugar",
            "count": 3,
            "ratio": 0.5,
            "ok": True,
            "none": None,
            "nested": {"tags": ["a", "b"], "deep": {"n": 1}},
        }
        store.put((agent, "u1"), "pref", value)
        item = store.get((agent, "u1"), "pref")
        assert item is not None
        assert item.value == value and item.key == "pref" and item.namespace == (agent, "u1")
        assert _aware(item.created_at) and _aware(item.updated_at)
        assert item.created_at <= item.updated_at

    def test_get_of_a_missing_key_or_namespace_is_none(
        self, store: EngramStore, agent: str
    ) -> None:
        store.put((agent,), "here", {"v": 1})
        assert store.get((agent,), "absent") is None
        assert store.get((agent, "nobody"), "here") is None
        assert store.get(("agt_does_not_exist",), "here") is None

    def test_put_of_an_existing_key_replaces_it(self, store: EngramStore, agent: str) -> None:
        store.put((agent, "u1"), "k", {"v": "first"})
        first = store.get((agent, "u1"), "k")
        store.put((agent, "u1"), "k", {"v": "second"})
        second = store.get((agent, "u1"), "k")
        assert first is not None and second is not None
        assert second.value == {"v": "second"}
        assert second.created_at == first.created_at and second.updated_at >= first.updated_at
        listed = store.search((agent, "u1"))
        assert [(i.key, i.value) for i in listed] == [("k", {"v": "second"})]

    def test_delete_and_a_none_put_remove_the_item(self, store: EngramStore, agent: str) -> None:
        store.put((agent,), "a", {"v": 1})
        store.put((agent,), "b", {"v": 2})
        store.delete((agent,), "a")
        store.batch([PutOp((agent,), "b", None)])
        assert store.get((agent,), "a") is None and store.get((agent,), "b") is None
        assert store.search((agent,)) == []
        store.delete((agent,), "never-there")

    def test_search_with_a_query_returns_scored_items_best_first(
        self, store: EngramStore, agent: str
    ) -> None:
        ns = (agent, "u1")
        store.put(ns, "tea", {"text": "Ada drinks green tea every morning"})
        store.put(ns, "ship", {"text": "The invoice INV-2026-0042 ships by freight"})
        store.put(ns, "car", {"text": "Bob repairs vintage motorcycles on weekends"})
        found = store.search(ns, query="invoice INV-2026-0042 freight", limit=3)
        assert found and all(isinstance(i, SearchItem) for i in found)
        assert found[0].key == "ship"
        assert all(isinstance(i.score, float) for i in found)
        scores = [i.score for i in found if i.score is not None]
        assert scores == sorted(scores, reverse=True)
        assert len(store.search(ns, query="invoice freight", limit=1)) == 1

    def test_search_without_a_query_lists_with_paging(self, store: EngramStore, agent: str) -> None:
        for n in range(5):
            store.put((agent,), f"k{n}", {"n": n})
        listed = store.search((agent,), limit=10)
        assert sorted(i.key for i in listed) == [f"k{n}" for n in range(5)]
        assert all(i.score is None for i in listed)
        pages = [store.search((agent,), limit=2, offset=o) for o in (0, 2, 4)]
        assert [len(p) for p in pages] == [2, 2, 1]
        assert sorted(i.key for p in pages for i in p) == [f"k{n}" for n in range(5)]

    def test_filter_narrows_on_value_fields(self, store: EngramStore, agent: str) -> None:
        ns = (agent, "u1")
        store.put(ns, "a", {"color": "red", "size": 1, "meta": {"lang": "en"}, "text": "apple"})
        store.put(ns, "b", {"color": "red", "size": 5, "meta": {"lang": "fr"}, "text": "cherry"})
        store.put(ns, "c", {"color": "blue", "size": 9, "meta": {"lang": "en"}, "text": "plum"})

        def keys(**kwargs: object) -> list[str]:
            return sorted(i.key for i in store.search(ns, **kwargs))  # type: ignore[arg-type]

        assert keys(filter={"color": "red"}) == ["a", "b"]
        assert keys(filter={"color": "red", "size": {"$gt": 1}}) == ["b"]
        assert keys(filter={"size": {"$gte": 5}}) == ["b", "c"]
        assert keys(filter={"size": {"$lt": 5}}) == ["a"]
        assert keys(filter={"size": {"$lte": 5}, "color": {"$ne": "blue"}}) == ["a", "b"]
        assert keys(filter={"meta": {"lang": "en"}}) == ["a", "c"]
        assert keys(filter={"color": {"$eq": "blue"}}) == ["c"]
        assert keys(filter={"color": "green"}) == []
        ranked = store.search(ns, query="cherry", filter={"color": "red"})
        assert [i.key for i in ranked] == ["b", "a"]
        assert keys(query="plum", filter={"color": "red"}) == ["a", "b"]

    def test_namespaces_are_isolated(
        self, store: EngramStore, agent: str, other_agent: str
    ) -> None:
        store.put((agent, "u1"), "k", {"who": "u1"})
        store.put((agent, "u2"), "k", {"who": "u2"})
        store.put((agent, "u1", "s1"), "k", {"who": "u1/s1"})
        store.put((other_agent, "u1"), "k", {"who": "other"})
        store.put((agent, "u1", "s1", "notes"), "k", {"who": "u1/s1/notes"})
        for ns, who in [
            ((agent, "u1"), "u1"),
            ((agent, "u2"), "u2"),
            ((agent, "u1", "s1"), "u1/s1"),
            ((other_agent, "u1"), "other"),
            ((agent, "u1", "s1", "notes"), "u1/s1/notes"),
        ]:
            item = store.get(ns, "k")
            assert item is not None and item.value == {"who": who} and item.namespace == ns
        under = {i.value["who"] for i in store.search((agent, "u1"))}
        assert under == {"u1", "u1/s1", "u1/s1/notes"}
        assert {i.value["who"] for i in store.search((agent,))} == under | {"u2"}
        assert [i.value["who"] for i in store.search((agent, "u1", "s1", "notes"))] == [
            "u1/s1/notes"
        ]
        store.delete((agent, "u1"), "k")
        assert store.get((agent, "u2"), "k") is not None
        assert store.get((agent, "u1", "s1"), "k") is not None

    def test_list_namespaces_by_prefix_suffix_depth_and_page(
        self, store: EngramStore, agent: str
    ) -> None:
        spaces = [
            (agent, "a", "b"),
            (agent, "a", "c", "d"),
            (agent, "a", "c", "e"),
            (agent, "f"),
        ]
        for ns in spaces:
            store.put(ns, "k", {"v": 1})
        assert store.list_namespaces(prefix=(agent,)) == sorted(spaces)
        assert store.list_namespaces(prefix=(agent, "a")) == sorted(spaces[:3])
        assert store.list_namespaces(prefix=(agent, "a"), max_depth=3) == [
            (agent, "a", "b"),
            (agent, "a", "c"),
        ]
        assert store.list_namespaces(prefix=(agent,), suffix=("e",)) == [(agent, "a", "c", "e")]
        assert store.list_namespaces(prefix=(agent, "*", "c")) == sorted(spaces[1:3])
        assert store.list_namespaces(prefix=(agent,), max_depth=2) == [(agent, "a"), (agent, "f")]
        assert store.list_namespaces(prefix=(agent,), limit=2, offset=1) == sorted(spaces)[1:3]
        store.delete((agent, "f"), "k")
        assert (agent, "f") not in store.list_namespaces(prefix=(agent,))

    def test_indexed_fields_decide_what_a_query_matches(
        self, store: EngramStore, agent: str
    ) -> None:
        store.put((agent,), "doc", {"title": "zebra migration", "body": "x"}, index=["title"])
        store.put((agent,), "other", {"title": "kitchen sink", "body": "zebra"}, index=["title"])
        found = store.search((agent,), query="zebra migration", limit=1)
        assert [i.key for i in found] == ["doc"]

    def test_invalid_namespaces_are_refused(self, store: EngramStore, agent: str) -> None:
        with pytest.raises(InvalidNamespaceError):
            store.put((agent, "has.period"), "k", {"v": 1})
        with pytest.raises(InvalidNamespaceError):
            store.put(("langgraph", "x"), "k", {"v": 1})
        with pytest.raises(InvalidNamespaceError):
            store.put((agent, "not an id"), "k", {"v": 1})
        assert store.search((agent, "not an id")) == []


class AsyncStoreContract:
    """The awaited methods: aput, aget, asearch, adelete, alist_namespaces."""

    async def test_the_async_methods_keep_the_contract(
        self, astore: EngramStore, agent: str
    ) -> None:
        ns = (agent, "u9", "s9")
        await astore.aput(ns, "tea", {"text": "Ada drinks green tea", "kind": "pref"})
        await astore.aput(ns, "bike", {"text": "Bob rides a red bike", "kind": "fact"})
        await astore.aput(ns, "bike", {"text": "Bob rides a blue bike", "kind": "fact"})
        item = await astore.aget(ns, "bike")
        assert item is not None and item.value["text"] == "Bob rides a blue bike"
        found = await astore.asearch((agent, "u9"), query="green tea", limit=1)
        assert [i.key for i in found] == ["tea"] and isinstance(found[0].score, float)
        facts = await astore.asearch((agent,), filter={"kind": "fact"})
        assert [i.key for i in facts] == ["bike"]
        assert await astore.alist_namespaces(prefix=(agent,)) == [ns]
        await astore.adelete(ns, "tea")
        assert await astore.aget(ns, "tea") is None
        assert [i.key for i in await astore.asearch(ns)] == ["bike"]
