"""Motor client factory with timeouts that fail fast instead of hanging."""

from collections.abc import Sequence
from typing import Any

import bson
from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase
from pymongo.errors import BulkWriteError, DuplicateKeyError

DUPLICATE_KEY = 11000


def connect_mongo(
    uri: str, *, app_name: str, timeout_ms: int = 5000, event_listeners: Sequence[Any] = ()
) -> AsyncIOMotorClient[Any]:
    """A client for the MongoDB-protocol server; connects lazily on first use."""
    return AsyncIOMotorClient(
        uri,
        appname=app_name,
        serverSelectionTimeoutMS=timeout_ms,
        connectTimeoutMS=timeout_ms,
        tz_aware=True,
        event_listeners=list(event_listeners),
    )


async def ping(db: AsyncIOMotorDatabase[Any]) -> bool:
    """True when the server answers a ping."""
    try:
        await db.command("ping")
    except Exception:
        return False
    return True


async def insert_new(collection: Any, docs: Sequence[dict[str, Any]]) -> set[int]:
    """Insert every document whose `_id` is new, in one unordered write; an id already present
    is a replay and is left as it is. Returns the indexes of `docs` that were already present;
    any other write error is raised."""
    if not docs:
        return set()
    try:
        await collection.insert_many(list(docs), ordered=False)
    except BulkWriteError as exc:
        errors = exc.details.get("writeErrors", [])
        if any(e.get("code") != DUPLICATE_KEY for e in errors):
            raise
        return {int(e["index"]) for e in errors}
    except DuplicateKeyError:
        return set(range(len(docs)))
    return set()


def as_stored(collection: Any, doc: dict[str, Any]) -> dict[str, Any]:
    """A document just written, as a read would hand it back (through BSON with the
    collection's codec options: datetimes to the millisecond, in the client's time zone), so
    the writer can use it without reading it."""
    options = collection.codec_options
    stored: dict[str, Any] = bson.decode(bson.encode(doc, codec_options=options), options)
    return stored
