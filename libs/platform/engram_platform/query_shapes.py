"""Which declared index serves a query, and whose data a filter may touch (pure; for tests).

A query's shape is its equality fields (a value, `$eq` or `$in`), its other conditions (ranges,
`$ne`, `$exists`, `$regex`, anything under `$or`) and its sort. An index serves it when its
leading keys are equality fields of the query (any order), followed by the sort keys (or, with
no sort, a ranged field); conditions the index leaves over are checked on the entries it found,
which is only allowed once it narrowed below the tenant. An `_id` equality is always served,
and so is an `_id` range sorted by `_id` (the primary key).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pymongo import IndexModel

from engram_platform.indexes import index_keys

TENANT = "tenant_id"
_EQUALITY_OPERATORS = frozenset({"$eq", "$in"})


@dataclass(frozen=True)
class QueryShape:
    """What an index must match of one query."""

    collection: str
    equal: frozenset[str]
    other: frozenset[str]
    sort: tuple[tuple[str, int], ...] = ()

    def describe(self) -> str:
        sort = ", ".join(f"{k} {'asc' if d > 0 else 'desc'}" for k, d in self.sort)
        return (
            f"{self.collection}: equal {sorted(self.equal)}, other {sorted(self.other)}"
            f"{f', sort {sort}' if sort else ''}"
        )


def _conditions(query: Mapping[str, Any]) -> Iterable[tuple[str, bool]]:
    """Each field the query conditions, and whether the condition is an equality."""
    for key, value in query.items():
        if key == "$and":
            for part in value:
                yield from _conditions(part)
        elif key in ("$or", "$nor"):
            for part in value:
                yield from ((field, False) for field, _ in _conditions(part))
        elif isinstance(value, Mapping) and any(str(op).startswith("$") for op in value):
            yield key, set(value) <= _EQUALITY_OPERATORS
        else:
            yield key, True


def shape_of(
    collection: str, query: Mapping[str, Any], sort: Sequence[tuple[str, int]] = ()
) -> QueryShape:
    """A query's shape; a field both equal and ranged counts as ranged."""
    equal: set[str] = set()
    other: set[str] = set()
    for field, is_equal in _conditions(query):
        (equal if is_equal else other).add(field)
    return QueryShape(collection, frozenset(equal - other), frozenset(other), tuple(sort))


def _by_primary_key(shape: QueryShape) -> bool:
    if "_id" in shape.equal:
        return True
    return "_id" in shape.other and all(field == "_id" for field, _ in shape.sort)


def _sort_follows(keys: list[tuple[str, int]], sort: tuple[tuple[str, int], ...]) -> bool:
    """The index's keys from here are the sort's, all in its direction or all reversed."""
    if len(keys) < len(sort) or [k for k, _ in keys[: len(sort)]] != [k for k, _ in sort]:
        return False
    same = [d == s for (_, d), (_, s) in zip(keys, sort, strict=False)]
    return all(same) or not any(same)


def serves(model: IndexModel, shape: QueryShape) -> bool:
    """Whether this index serves the query without a scan of the tenant or a sort in memory."""
    keys = index_keys(model)
    prefix = 0
    while prefix < len(keys) and keys[prefix][0] in shape.equal:
        prefix += 1
    used = {field for field, _ in keys[:prefix]}
    rest = keys[prefix:]
    if shape.sort:
        if not _sort_follows(rest, shape.sort):
            return False
        used |= {field for field, _ in shape.sort}
    elif rest and rest[0][0] in shape.other:
        used.add(rest[0][0])
    if not used:
        return False
    left = (shape.equal | shape.other) - used
    return not left or bool(used - {TENANT})


def served_by(shape: QueryShape, declared: Sequence[IndexModel]) -> IndexModel | None:
    """The first declared index serving the shape; None for a scan. `_id` is never declared."""
    if _by_primary_key(shape):
        return IndexModel([("_id", 1)], name="_id_")
    return next((model for model in declared if serves(model, shape)), None)


def tenant_of(query: Mapping[str, Any]) -> Any:
    """The tenant a filter names (top level or inside `$and`), or None."""
    if TENANT in query:
        return query[TENANT]
    for part in query.get("$and", ()):
        found = tenant_of(part)
        if found is not None:
            return found
    return None


def ids_within(query: Mapping[str, Any], tenant_id: str) -> bool:
    """Whether every `_id` the filter names (values, `$in`, range bounds) is inside the tenant's
    keys (`tenant:...`; `tenant;` is the upper bound of a range over them)."""
    condition = query.get("_id")
    if condition is None:
        return False
    if isinstance(condition, Mapping):
        values = [v for op, bound in condition.items() for v in (bound if op == "$in" else [bound])]
    else:
        values = [condition]
    return bool(values) and all(
        isinstance(v, str) and (v.startswith(f"{tenant_id}:") or v == f"{tenant_id};")
        for v in values
    )
