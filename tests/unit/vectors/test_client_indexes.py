"""A Qdrant server collection gets the keyword indexes a service declares after it was created,
when the service opens it (as the embedded engine's shards do)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from engram_vectors.client_store import (
    METADATA_DIMENSION_KEY,
    METADATA_FINGERPRINT_KEY,
    METADATA_FORMAT,
    METADATA_FORMAT_KEY,
    QdrantClientStore,
)

pytestmark = pytest.mark.unit


class ServerCollection:
    """The calls opening a collection makes, over one collection a server holds."""

    def __init__(self, indexed: list[str]) -> None:
        self.metadata = {
            METADATA_FORMAT_KEY: METADATA_FORMAT,
            METADATA_DIMENSION_KEY: 8,
            METADATA_FINGERPRINT_KEY: "fp",
        }
        self.indexed: dict[str, Any] = dict.fromkeys(indexed)
        self.created: list[tuple[str, bool]] = []

    async def collection_exists(self, name: str) -> bool:
        return name == "knowledge"

    async def get_collection(self, name: str) -> Any:
        return SimpleNamespace(
            config=SimpleNamespace(metadata=self.metadata), payload_schema=dict(self.indexed)
        )

    async def create_payload_index(
        self, name: str, key: str, *, field_schema: Any, wait: bool
    ) -> None:
        assert wait, "the index exists before the first query"
        self.created.append((key, bool(field_schema.is_tenant)))
        self.indexed[key] = field_schema


def opened_on(server: ServerCollection) -> QdrantClientStore:
    store = QdrantClientStore(
        url="http://127.0.0.1:9", keyword_indexes=("tenant_id", "kind", "scope")
    )
    store._client = server  # type: ignore[assignment]
    return store


async def test_opening_adds_only_the_declared_indexes_the_collection_lacks() -> None:
    server = ServerCollection(indexed=["tenant_id", "kind"])
    info = await opened_on(server).collection_info("knowledge")
    assert info.fingerprint == "fp"
    assert server.created == [("scope", False)]
    await opened_on(server).collection_info("knowledge")
    assert server.created == [("scope", False)], "a second start adds nothing"


async def test_a_collection_without_indexes_gets_all_with_the_tenant_marked() -> None:
    server = ServerCollection(indexed=[])
    await opened_on(server).collection_info("knowledge")
    assert server.created == [("tenant_id", True), ("kind", False), ("scope", False)]
