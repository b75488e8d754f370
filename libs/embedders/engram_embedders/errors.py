"""Typed failures of the embedders, so callers can tell bad input from a broken model."""

from __future__ import annotations


class EmbedderError(Exception):
    """Base of every failure raised by an embedder."""


class InvalidEmbeddingInput(EmbedderError, ValueError):
    """Input refused before any model work; names the index, never the text."""

    def __init__(self, reason: str, index: int | None = None) -> None:
        self.reason = reason
        self.index = index
        where = "" if index is None else f" at index {index}"
        super().__init__(f"invalid embedding input{where}: {reason}")


class ModelFilesMissing(EmbedderError, FileNotFoundError):
    """The local model's files are not installed; the message says how to install them."""


class EmbeddingServiceError(EmbedderError):
    """A remote embedding service refused or failed the request."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        self.status_code = status_code
        super().__init__(message)


class ProvenanceUnavailable(EmbedderError):
    """Provenance is not known yet; a remote embedder learns it from its first response."""


class ProvenanceChanged(EmbedderError):
    """The embedder's reported model or dimension changed; its vectors would mix spaces."""
