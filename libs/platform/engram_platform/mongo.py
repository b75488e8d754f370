"""Motor client factory with timeouts that fail fast instead of hanging."""

from collections.abc import Sequence
from typing import Any

from motor.motor_asyncio import AsyncIOMotorClient, AsyncIOMotorDatabase


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
