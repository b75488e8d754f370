"""Fixtures for the connectors' integration tests: a drop root, the Drive stub, the database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient

from tests.conftest import Infra
from tests.support.drive_stub import DriveStub


@pytest.fixture
def drop_root(tmp_path: Path) -> Path:
    """An empty drop root; tests create `<root>/<tenant_id>/`."""
    root = tmp_path / "drop"
    root.mkdir()
    return root


@pytest.fixture
def drive() -> Iterator[DriveStub]:
    """The local Drive v3 server, on a free port."""
    with DriveStub() as stub:
        yield stub


@pytest.fixture
def connectors_db(infra: Infra, names: dict[str, str]) -> Iterator[Any]:
    """The connectors service's own database (cursors, submissions)."""
    client: MongoClient[Any] = MongoClient(infra.mongodb_uri, tz_aware=True)
    yield client[f"{names['ENGRAM_DATABASE_PREFIX']}connectors"]
    client.close()


@pytest.fixture
def documents_topic(names: dict[str, str]) -> str:
    return f"{names['ENGRAM_TOPIC_PREFIX']}engram.documents.v1"
