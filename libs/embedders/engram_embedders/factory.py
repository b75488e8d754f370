"""One place that turns a configured kind into an embedder."""

from __future__ import annotations

from typing import Any, Literal

from engram_embedders.hashing import HashingEmbedder
from engram_embedders.minilm import MiniLMEmbedder
from engram_embedders.model_process import ProcessMiniLMEmbedder
from engram_embedders.openai_compatible import OpenAICompatibleEmbedder
from engram_embedders.port import Embedder

EmbedderKind = Literal["minilm", "hashing", "openai"]


def make_embedder(kind: EmbedderKind, **options: Any) -> Embedder:
    """Build an embedder of `kind`; options are that implementation's keyword arguments."""
    if kind == "minilm":
        if options.pop("own_process", False):
            return ProcessMiniLMEmbedder(**options)
        return MiniLMEmbedder(**options)
    if kind == "hashing":
        return HashingEmbedder(**options)
    if kind == "openai":
        return OpenAICompatibleEmbedder(**options)
    raise ValueError(f"unknown embedder kind: {kind!r}")
