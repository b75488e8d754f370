"""On a shared Qdrant server each vector directory still gets collections of its own."""

from __future__ import annotations

import re

import pytest

from tests.support.vector_collections import with_collection_per_path

pytestmark = pytest.mark.unit

SERVER = {"QDRANT_URL": "http://127.0.0.1:6333"}


def test_without_a_server_nothing_changes() -> None:
    env = {"ENGRAM_MEMORY_VECTOR_PATH": "/tmp/a/vectors", "QDRANT_URL": ""}
    assert with_collection_per_path(env) == env


def test_each_directory_names_its_own_collection() -> None:
    first = with_collection_per_path({**SERVER, "ENGRAM_MEMORY_VECTOR_PATH": "/tmp/a/vectors"})
    again = with_collection_per_path({**SERVER, "ENGRAM_MEMORY_VECTOR_PATH": "/tmp/a/vectors"})
    other = with_collection_per_path({**SERVER, "ENGRAM_MEMORY_VECTOR_PATH": "/tmp/b/vectors"})
    name = first["ENGRAM_MEMORY_COLLECTION"]
    assert re.fullmatch(r"memory_[0-9a-f]{16}", name)
    assert again["ENGRAM_MEMORY_COLLECTION"] == name
    assert other["ENGRAM_MEMORY_COLLECTION"] != name


def test_every_service_with_a_directory_gets_one_and_nothing_else_moves() -> None:
    env = {
        **SERVER,
        "ENGRAM_MEMORY_VECTOR_PATH": "/tmp/x",
        "ENGRAM_ENRICHMENT_VECTOR_PATH": "/tmp/x",
        "ENGRAM_DATA_DIR": "/tmp/data",
    }
    named = with_collection_per_path(env)
    assert named.keys() - env.keys() == {"ENGRAM_MEMORY_COLLECTION", "ENGRAM_ENRICHMENT_COLLECTION"}
    assert named["ENGRAM_MEMORY_COLLECTION"] != named["ENGRAM_ENRICHMENT_COLLECTION"]
    assert {key: named[key] for key in env} == env


def test_a_collection_named_already_is_kept() -> None:
    env = {**SERVER, "ENGRAM_MEMORY_VECTOR_PATH": "/tmp/x", "ENGRAM_MEMORY_COLLECTION": "mine"}
    assert with_collection_per_path(env)["ENGRAM_MEMORY_COLLECTION"] == "mine"
