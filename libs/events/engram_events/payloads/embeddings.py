"""Embedding requests and results; results carry the embedder's own provenance."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from engram_events.ids import Id, Sha256
from engram_events.payloads._base import Payload
from engram_events.payloads.vectors import PackedVector

Purpose = Literal["memory", "fact", "article_section", "query", "passage"]


class VectorProvenance(Payload):
    """What produced a vector, as reported by the embedder itself."""

    provider: str
    model_id: str
    weights_sha256: str
    dimension: int = Field(ge=1)
    normalized: bool
    precision: str
    fingerprint: Sha256


class TextItem(Payload):
    """One text to embed, addressed by the requester's id."""

    item_id: Id
    text: Annotated[str, StringConstraints(min_length=1, max_length=32_000)]


class EmbeddingRequested(Payload):
    """Texts a service wants embedded; `requester` routes the result back."""

    request_id: Id
    requester: Id
    purpose: Purpose
    items: list[TextItem] = Field(min_length=1, max_length=512)


class EmbeddedItem(Payload):
    """One vector for one requested item."""

    item_id: Id
    vector: PackedVector


class RejectedItem(Payload):
    """An item the embedder refused before embedding, with the reason."""

    item_id: Id
    reason: str


class EmbeddingComputed(Payload):
    """Vectors for a request, with the provenance the embedder returned."""

    request_id: Id
    requester: Id
    purpose: Purpose
    items: list[EmbeddedItem]
    rejected: list[RejectedItem] = Field(default_factory=list)
    provenance: VectorProvenance
    text_sha256: list[Sha256] = Field(default_factory=list)
