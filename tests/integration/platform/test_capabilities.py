"""The server's capabilities are told by what it is: the local server has no multikey indexes,
MongoDB has them."""

from __future__ import annotations

from typing import Any

from engram_platform.capabilities import server_capabilities


async def test_the_local_server_is_told_apart_by_its_build_info(mongo_db: Any) -> None:
    info = await mongo_db.command("buildInfo")
    capabilities = await server_capabilities(mongo_db)
    assert capabilities.multikey_indexes is ("ferretdbVersion" not in info)
