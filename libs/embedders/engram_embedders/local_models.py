"""The models that run on this machine's CPU, by the kind name settings use."""

from __future__ import annotations

from typing import Any, Literal

from engram_embedders.bge import BgeSmallEmbedder
from engram_embedders.minilm import MiniLMEmbedder
from engram_embedders.onnx_text import OnnxTextEmbedder

LocalKind = Literal["minilm", "bge-small"]
LOCAL_KINDS: tuple[LocalKind, ...] = ("minilm", "bge-small")


def make_local(kind: str, **options: Any) -> OnnxTextEmbedder:
    """An in-process ONNX embedder of `kind` with that class's keyword options."""
    if kind == "minilm":
        return MiniLMEmbedder(**options)
    if kind == "bge-small":
        return BgeSmallEmbedder(**options)
    raise ValueError(f"not a local model kind: {kind!r}")
