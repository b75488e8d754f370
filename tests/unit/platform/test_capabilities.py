"""Stores learn what the server serves from one place: MongoDB's multikey indexes, the local
server's lack of them."""

from __future__ import annotations

from typing import Any

import pytest

from engram_platform.capabilities import server_capabilities

pytestmark = pytest.mark.unit


class BuildInfo:
    """A database that answers `buildInfo` as a given server does."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info
        self.commands: list[str] = []

    async def command(self, name: str) -> dict[str, Any]:
        self.commands.append(name)
        return self.info


async def test_mongodb_serves_equality_on_array_elements_from_its_indexes() -> None:
    db = BuildInfo({"version": "7.0.12", "ok": 1.0})
    assert (await server_capabilities(db)).multikey_indexes is True
    assert db.commands == ["buildInfo"]


async def test_the_local_server_does_not() -> None:
    db = BuildInfo({"version": "7.0.77", "ferretdbVersion": "v1.24.2", "ok": 1.0})
    assert (await server_capabilities(db)).multikey_indexes is False
