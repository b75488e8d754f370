"""Embedders that return vectors together with the provenance of their vector space."""

from engram_embedders.bge import BgeSmallEmbedder
from engram_embedders.errors import (
    EmbedderError,
    EmbeddingServiceError,
    InvalidEmbeddingInput,
    ModelFilesMissing,
    ProvenanceChanged,
    ProvenanceUnavailable,
)
from engram_embedders.factory import EmbedderKind, make_embedder
from engram_embedders.hashing import HashingEmbedder
from engram_embedders.minilm import MiniLMEmbedder
from engram_embedders.openai_compatible import OpenAICompatibleEmbedder
from engram_embedders.port import Embedder
from engram_embedders.provenance import Embeddings, Provenance
from engram_embedders.validation import validate_texts

__all__ = [
    "BgeSmallEmbedder",
    "Embedder",
    "EmbedderError",
    "EmbedderKind",
    "EmbeddingServiceError",
    "Embeddings",
    "HashingEmbedder",
    "InvalidEmbeddingInput",
    "MiniLMEmbedder",
    "ModelFilesMissing",
    "OpenAICompatibleEmbedder",
    "Provenance",
    "ProvenanceChanged",
    "ProvenanceUnavailable",
    "make_embedder",
    "validate_texts",
]
