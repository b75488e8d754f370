"""Every relation id of a listing, page after page, for tests that check paging against the
whole walk."""

from __future__ import annotations

from typing import Any


async def all_pages(graph: Any, tenant: str, start: str, limit: int, depth: int = 2) -> list[str]:
    """The relation ids of `start`'s listing in both directions, following `next_cursor` until
    the last page."""
    got: list[str] = []
    cursor = None
    while True:
        found = await graph.relations(
            tenant,
            start,
            direction="both",
            predicate=None,
            depth=depth,
            limit=limit,
            cursor=cursor,
        )
        got += [r["relation_id"] for r in found["relations"]]
        cursor = found["next_cursor"]
        if cursor is None:
            return got
