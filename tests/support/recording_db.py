"""A database fake that records each query's filter and sort, to hold stores to their indexes.

Stores run their real methods against it; reads answer the rows seeded for the collection
(whatever the filter), writes change nothing. Every call is tagged with the label of the store
method being exercised, so a failure names the method that issued the query.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from bson.codec_options import CodecOptions
from pymongo import IndexModel

from engram_platform.query_shapes import (
    QueryShape,
    ids_within,
    served_by,
    shape_of,
    tenant_of,
)


@dataclass
class Call:
    """One query: where, which method of the collection, the filter and the sort."""

    label: str
    collection: str
    method: str
    filter: dict[str, Any]
    sort: list[tuple[str, int]] = field(default_factory=list)

    @property
    def shape(self) -> QueryShape:
        return shape_of(self.collection, self.filter, self.sort)


def _sort_keys(key_or_list: Any, direction: int | None) -> list[tuple[str, int]]:
    if isinstance(key_or_list, str):
        return [(key_or_list, direction or 1)]
    return [(str(k), int(d)) for k, d in key_or_list]


class Cursor:
    """`find`'s answer: sort and limit are noted on the call; iteration yields the seeded rows."""

    def __init__(self, call: Call, rows: list[dict[str, Any]]) -> None:
        self.call = call
        self.rows = rows

    def sort(self, key_or_list: Any, direction: int | None = None) -> Cursor:
        self.call.sort = _sort_keys(key_or_list, direction)
        return self

    def limit(self, _n: int) -> Cursor:
        return self

    def skip(self, _n: int) -> Cursor:
        return self

    def __aiter__(self) -> Any:
        return self._rows()

    async def _rows(self) -> Any:
        for row in self.rows:
            yield dict(row)

    async def to_list(self, length: int | None = None) -> list[dict[str, Any]]:
        return [dict(row) for row in self.rows]


class RecordingCollection:
    """The collection calls the stores make, recorded."""

    def __init__(self, db: RecordingDatabase, name: str) -> None:
        self.db = db
        self.name = name
        self.codec_options: CodecOptions[dict[str, Any]] = CodecOptions(tz_aware=True)

    def _note(self, method: str, query: Mapping[str, Any] | None) -> Call:
        call = Call(self.db.label, self.name, method, dict(query or {}))
        self.db.calls.append(call)
        return call

    def _rows(self) -> list[dict[str, Any]]:
        return self.db.rows.get(self.name, [])

    def find(self, query: Mapping[str, Any] | None = None, *args: Any, **kwargs: Any) -> Cursor:
        call = self._note("find", query)
        if "sort" in kwargs:
            call.sort = _sort_keys(kwargs["sort"], None)
        return Cursor(call, self._rows())

    async def find_one(self, query: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        self._note("find_one", query)
        rows = self._rows()
        return dict(rows[0]) if rows else None

    async def find_one_and_update(self, query: Mapping[str, Any], *a: Any, **k: Any) -> Any:
        return await self._answer("find_one_and_update", query)

    async def _answer(self, method: str, query: Mapping[str, Any]) -> Any:
        self._note(method, query)
        rows = self._rows()
        return dict(rows[0]) if rows else None

    async def count_documents(self, query: Mapping[str, Any], **kwargs: Any) -> int:
        self._note("count_documents", query)
        return len(self._rows())

    async def update_one(self, query: Mapping[str, Any], *a: Any, **k: Any) -> Any:
        return self._written("update_one", query)

    async def update_many(self, query: Mapping[str, Any], *a: Any, **k: Any) -> Any:
        return self._written("update_many", query)

    async def replace_one(self, query: Mapping[str, Any], *a: Any, **k: Any) -> Any:
        return self._written("replace_one", query)

    async def delete_one(self, query: Mapping[str, Any], *a: Any, **k: Any) -> Any:
        return self._written("delete_one", query)

    async def delete_many(self, query: Mapping[str, Any], *a: Any, **k: Any) -> Any:
        return self._written("delete_many", query)

    def _written(self, method: str, query: Mapping[str, Any]) -> Any:
        self._note(method, query)
        return SimpleNamespace(matched_count=0, modified_count=0, deleted_count=0)

    async def bulk_write(self, requests: Sequence[Any], **kwargs: Any) -> Any:
        for request in requests:
            self._note(f"bulk_write.{type(request).__name__}", request._filter)
        return SimpleNamespace(matched_count=0, modified_count=0, upserted_count=0, upserted_ids={})

    async def insert_one(self, doc: Mapping[str, Any], **kwargs: Any) -> Any:
        return SimpleNamespace(inserted_id=doc.get("_id"))

    async def insert_many(self, docs: Iterable[Mapping[str, Any]], **kwargs: Any) -> Any:
        return SimpleNamespace(inserted_ids=[d.get("_id") for d in docs])


class RecordingDatabase:
    """`db[name]` is a recording collection; `rows` seeds what reads answer, per collection."""

    def __init__(self, rows: Mapping[str, list[dict[str, Any]]] | None = None) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = dict(rows or {})
        self.calls: list[Call] = []
        self.label = ""
        self.name = "recording"

    def __getitem__(self, name: str) -> RecordingCollection:
        return RecordingCollection(self, name)

    async def run(self, exercise: Mapping[str, Callable[[], Awaitable[Any]]]) -> None:
        """Run each labelled store call, tagging the queries it makes with its label."""
        for label, action in exercise.items():
            self.label = label
            await action()
        self.label = ""


def public_methods(*stores: type) -> set[str]:
    """`Class.method` for every public method of these store classes (what must be exercised)."""
    return {
        f"{cls.__name__}.{name}"
        for cls in stores
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_") and not isinstance(member, staticmethod)
    }


@dataclass
class Verdict:
    """What the calls broke; empty lists mean every rule held."""

    unindexed: list[str] = field(default_factory=list)
    unscoped: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def report(self) -> str:
        """Each broken rule on a line of its own, for the assertion message."""
        sections = [
            ("served by no declared index", self.unindexed),
            ("without the tenant (or the agent)", self.unscoped),
            ("exceptions no query needs any more", self.stale),
        ]
        return "\n".join(f"{title}:\n  " + "\n  ".join(items) for title, items in sections if items)


def judge(
    calls: Sequence[Call],
    declared: Mapping[str, Sequence[IndexModel]],
    *,
    tenant_id: str,
    unindexed: Mapping[tuple[str, str], str] = {},
    tenant_free: Mapping[tuple[str, str], str] = {},
    id_scoped: Mapping[tuple[str, str], str] = {},
    scope_fields: Mapping[str, str] = {},
    scope_free: Mapping[tuple[str, str], str] = {},
) -> Verdict:
    """Every call served by a declared index and naming the tenant (and `scope_fields`' field
    for their collection), unless its (label, collection) is listed as an exception; an
    exception no call needs is reported as stale."""
    verdict = Verdict()
    used: set[tuple[str, str]] = set()
    for call in calls:
        where = (call.label, call.collection)
        if served_by(call.shape, declared.get(call.collection, ())) is None:
            if where in unindexed:
                used.add(where)
            else:
                verdict.unindexed.append(f"{call.label} {call.method} {call.shape.describe()}")
        named = tenant_of(call.filter)
        if named != tenant_id:
            if ids_within(call.filter, tenant_id) and where in id_scoped:
                used.add(where)
            elif where in tenant_free:
                used.add(where)
            else:
                verdict.unscoped.append(
                    f"{call.label} {call.method} {call.collection} {call.filter}"
                )
        scope = scope_fields.get(call.collection)
        named_fields = call.shape.equal | call.shape.other
        if scope and "_id" not in call.shape.equal and scope not in named_fields:
            if where in scope_free:
                used.add(where)
            else:
                verdict.unscoped.append(f"{call.label} {call.method}: no {scope} in {call.filter}")
    listed = {*unindexed, *tenant_free, *id_scoped, *scope_free}
    verdict.stale = sorted(f"{label} on {c}" for label, c in listed - used)
    return verdict
