"""One place that turns a configured kind into an embedder."""

from __future__ import annotations

from typing import Any, Literal

from engram_embedders.hashing import HashingEmbedder
from engram_embedders.local_models import LOCAL_KINDS, make_local
from engram_embedders.model_process import ProcessModelEmbedder
from engram_embedders.openai_compatible import OpenAICompatibleEmbedder
from engram_embedders.port import Embedder

EmbedderKind = Literal["minilm", "bge-small", "hashing", "openai"]


def make_embedder(kind: EmbedderKind, **options: Any) -> Embedder:
    """Build an embedder of `kind`; options are that implementation's keyword arguments."""
    if kind in LOCAL_KINDS:
        if options.pop("own_process", False):
            return ProcessModelEmbedder(model=kind, **options)
        return make_local(kind, **options)
    if kind == "hashing":
        return HashingEmbedder(**options)
    if kind == "openai":
        return OpenAICompatibleEmbedder(**options)
    raise ValueError(f"unknown embedder kind: {kind!r}")
