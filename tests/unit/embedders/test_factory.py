"""Every implementation satisfies the Embedder port and is built by the factory."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from engram_embedders import (
    BgeSmallEmbedder,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAICompatibleEmbedder,
    make_embedder,
)

pytestmark = pytest.mark.unit


async def test_factory_kinds_build_port_implementations() -> None:
    built = [
        make_embedder("hashing"),
        make_embedder("minilm"),
        make_embedder("bge-small"),
        make_embedder("openai", base_url="http://127.0.0.1:9/v1", model="m"),
    ]
    assert [type(embedder) for embedder in built] == [
        HashingEmbedder,
        MiniLMEmbedder,
        BgeSmallEmbedder,
        OpenAICompatibleEmbedder,
    ]
    for embedder in built:
        port_members = ("provenance", "embed", "embed_queries", "aclose")
        assert all(hasattr(type(embedder), member) for member in port_members)
        await embedder.aclose()


def accepts_port(embedder: Embedder) -> Embedder:
    """Type-checked by mypy: each implementation must be assignable to the port."""
    return embedder


def test_implementations_type_check_against_the_port() -> None:
    implementations: list[Embedder] = [
        accepts_port(HashingEmbedder()),
        accepts_port(MiniLMEmbedder()),
        accepts_port(BgeSmallEmbedder()),
        accepts_port(OpenAICompatibleEmbedder(base_url="http://127.0.0.1:9/v1", model="m")),
    ]
    for embedder in implementations:
        kind = type(embedder)
        assert isinstance(inspect.getattr_static(kind, "provenance"), property), kind
        for name in ("embed", "embed_queries", "aclose"):
            member, port_member = getattr(kind, name), getattr(Embedder, name)
            assert inspect.iscoroutinefunction(member), (kind, name)
            assert _parameters(member) == _parameters(port_member), (kind, name)


def _parameters(function: Callable[..., Any]) -> list[tuple[str, Any]]:
    """Each parameter's name and kind: what a caller of the port relies on."""
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values()]
