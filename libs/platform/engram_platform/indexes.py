"""Declared secondary indexes, created at start-up; a TTL the server refuses becomes a sweep.

Each store declares the indexes its queries need beside those queries (`Indexes`: collection
name -> `IndexModel`s); a service's composition root merges its stores' declarations into
`Runtime.indexes` and the lifespan creates them, idempotently (names derive from the keys, so
a second start is a no-op). The local server (FerretDB v1) refuses `expireAfterSeconds`: the
index is then made without it and the service deletes expired documents itself (`sweep`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import IndexModel
from pymongo.errors import OperationFailure

log = logging.getLogger(__name__)

Indexes = Mapping[str, Sequence[IndexModel]]
NOT_IMPLEMENTED = 238
CONFLICTS = frozenset({85, 86})
"""IndexOptionsConflict, IndexKeySpecsConflict: an index of that name exists, declared otherwise."""
SWEEP_SECONDS = 3600.0
"""Hourly: on the local server each sweep decodes every document of the collection."""


@dataclass(frozen=True)
class Expiry:
    """Documents whose `field` is older than `seconds` go: a TTL index the server would not keep."""

    collection: str
    field: str
    seconds: int


def merge(*declared: Indexes) -> dict[str, list[IndexModel]]:
    """Several stores' declarations as one; a collection named twice keeps all its indexes,
    an index declared twice (by name) once."""
    merged: dict[str, list[IndexModel]] = {}
    for one in declared:
        for collection, models in one.items():
            kept = merged.setdefault(collection, [])
            names = {model.document["name"] for model in kept}
            kept.extend(model for model in models if model.document["name"] not in names)
    return merged


def index_keys(model: IndexModel) -> list[tuple[str, int]]:
    """An index's keys in order, with their directions."""
    return [(str(k), int(v)) for k, v in model.document["key"].items()]


def ttl_of(model: IndexModel) -> int | None:
    """The index's `expireAfterSeconds`, or None."""
    seconds = model.document.get("expireAfterSeconds")
    return None if seconds is None else int(seconds)


async def ensure_indexes(db: Any, declared: Indexes) -> list[Expiry]:
    """Create every declared index (existing ones are left as they are); returns the expiries
    the server refused as TTL indexes, which the caller sweeps instead.

    One `createIndexes` per index: the local server closes the connection when one command
    names several indexes that all exist already (FerretDB 1.24, a second start)."""
    refused: list[Expiry] = []
    for collection, models in declared.items():
        for model in models:
            seconds = ttl_of(model)
            if seconds is None:
                await _create(db[collection], model)
            elif not await _create_ttl(db[collection], model):
                refused.append(Expiry(collection, index_keys(model)[0][0], seconds))
    return refused


async def _create(collection: Any, model: IndexModel) -> None:
    """Create one index, dropping a same-named one declared differently first."""
    try:
        await collection.create_indexes([model])
    except OperationFailure as exc:
        if exc.code not in CONFLICTS:
            raise
        await collection.drop_index(model.document["name"])
        await collection.create_indexes([model])
        log.info("index redeclared", extra={"collection": collection.name})


async def _create_ttl(collection: Any, model: IndexModel) -> bool:
    """The TTL index, or (refused by the server) the same keys without expiry; False then."""
    try:
        await _create(collection, model)
    except OperationFailure as exc:
        if exc.code != NOT_IMPLEMENTED:
            raise
        plain = IndexModel(index_keys(model), name=model.document["name"])
        await _create(collection, plain)
        log.warning(
            "server keeps no TTL index; expired documents are swept instead",
            extra={"collection": collection.name, "index": model.document["name"]},
        )
        return False
    return True


async def sweep_once(db: Any, expiries: Sequence[Expiry], now: datetime | None = None) -> int:
    """Delete what each expiry no longer keeps; how many documents went."""
    at = now or datetime.now(UTC)
    removed = 0
    for expiry in expiries:
        cutoff = at - timedelta(seconds=expiry.seconds)
        result = await db[expiry.collection].delete_many({expiry.field: {"$lt": cutoff}})
        removed += int(result.deleted_count)
    return removed


async def sweep(db: Any, expiries: Sequence[Expiry], every: float = SWEEP_SECONDS) -> None:
    """Sweep every `every` seconds until cancelled (the first after one wait, so a start costs
    no scan); a failed pass is logged and tried again next time."""
    while True:
        await asyncio.sleep(every)
        try:
            removed = await sweep_once(db, expiries)
        except Exception as exc:
            log.warning("expiry sweep failed", extra={"error_type": type(exc).__name__})
        else:
            if removed:
                log.info("expired documents swept", extra={"count": removed})
