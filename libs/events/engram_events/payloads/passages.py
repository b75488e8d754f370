"""Passages: cited spans of a prose document version, owned by extraction."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from engram_events.ids import Count, Id, Sha256
from engram_events.payloads._base import Payload
from engram_events.payloads.documents import Name
from engram_events.values import Text

MAX_PASSAGE_CHARS = 32_000
MAX_WITHDRAWN = 2000
"""Passage ids per `passages.withdrawn`; more go in several events (each well under 1 MB)."""
Heading = Annotated[Text, StringConstraints(min_length=1, max_length=200)]


class PassageUpserted(Payload):
    """One passage of a document version, announced once extraction holds it durably: its text
    is `[start, end)` of the version's extracted text, under `heading_path`, on `page` (1-based,
    PDF only) through `page_end`."""

    passage_id: Id
    document_id: Id
    version: Id
    name: Name
    ordinal: Count
    heading_path: list[Heading] = Field(default_factory=list, max_length=32)
    start: Count
    end: Count
    page: int | None = Field(default=None, ge=1)
    page_end: int | None = Field(default=None, ge=1)
    text: Annotated[Text, StringConstraints(min_length=1, max_length=MAX_PASSAGE_CHARS)]
    text_sha256: Sha256


class PassagesWithdrawn(Payload):
    """Passages of a document are gone: replaced by a new version (`new_version`, naming it) or
    with the document (`document_deleted`, naming the prune job when there is one, which
    enrichment acknowledges even when the list is empty). Their rows and vectors must follow."""

    document_id: Id
    passage_ids: list[Id] = Field(default_factory=list, max_length=MAX_WITHDRAWN)
    reason: Literal["new_version", "document_deleted"]
    version: Id | None = None
    prune_job_id: Id | None = None
