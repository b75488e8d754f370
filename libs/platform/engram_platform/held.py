"""Which of some ids a tenant holds, for the internal `known` routes (one `_id $in` query)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def tenant_keys(tenant_id: str, ids: Sequence[str]) -> list[str]:
    """Stored keys start with the tenant: `<tenant>:<id>`, each id once."""
    return [f"{tenant_id}:{item}" for item in dict.fromkeys(ids)]


async def held_ids(
    collection: Any, tenant_id: str, ids: Sequence[str], fields: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """The tenant's rows among `ids` (only `fields` of each), keyed by id; served by `_id`."""
    keys = tenant_keys(tenant_id, ids)
    if not keys:
        return {}
    prefix = len(tenant_id) + 1
    cursor = collection.find(
        {"_id": {"$in": keys}, "tenant_id": tenant_id}, {"_id": 1, **dict.fromkeys(fields, 1)}
    )
    return {row["_id"][prefix:]: row async for row in cursor}
