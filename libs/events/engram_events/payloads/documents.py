"""Documents: submitted by connectors and the gateway, stored by ingest."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from engram_events.ids import Count, Id, Sha256
from engram_events.payloads._base import Payload
from engram_events.values import Text

DocumentSource = Literal["gateway", "file_drop", "gdrive", "import"]
DeletionReason = Literal[
    "user_deleted", "drive_trashed", "drive_removed", "permission_lost", "prune"
]
Mime = Annotated[
    str, StringConstraints(min_length=3, max_length=127, pattern=r"^[\w.+-]+/[\w.+-]+$")
]
Name = Annotated[Text, StringConstraints(min_length=1, max_length=512)]


class DocumentSubmitted(Payload):
    """One version of one source item, with its bytes (base64) inline."""

    document_id: Id
    version: Id
    source: DocumentSource
    source_item_id: Annotated[str, StringConstraints(min_length=1, max_length=1024)]
    name: Name
    mime: Mime
    content_sha256: Sha256
    size_bytes: Count
    content_base64: str
    submitted_by: Id | None = None


class DocumentDeleted(Payload):
    """A source item is gone (deleted, trashed, removed, or no longer readable)."""

    document_id: Id
    source: DocumentSource
    reason: DeletionReason
    prune_job_id: Id | None = None


class DocumentIngested(Payload):
    """Ingest stored this document version durably; extraction may start."""

    document_id: Id
    version: Id
    source: DocumentSource
    source_item_id: str
    name: Name
    mime: Mime
    content_sha256: Sha256
    size_bytes: Count
    content_base64: str
    attempt: int = Field(default=1, ge=1)


class DocumentTombstoned(Payload):
    """A document and everything derived from it must go."""

    document_id: Id
    reason: DeletionReason
    prune_job_id: Id | None = None
    content_sha256: Sha256 | None = None


class DocumentExtracted(Payload):
    """Extraction finished a document version: its records are durable; counts only."""

    document_id: Id
    version: Id
    record_count: Count
    rejected_count: Count
    unchanged_count: Count = 0
    extractor: Annotated[str, StringConstraints(max_length=64)] = ""
    attempts: int = Field(default=1, ge=1)
    passage_count: Count = 0


class DocumentExtractionFailed(Payload):
    """Extraction gave up on a document version; `error` names the reason, never the content."""

    document_id: Id
    version: Id
    attempt: int = Field(ge=1)
    error: Annotated[str, StringConstraints(max_length=1000)]
    permanent: bool = True
