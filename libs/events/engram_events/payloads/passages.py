"""Passages: cited spans of a prose document version, owned by extraction."""

from typing import Annotated

from pydantic import Field, StringConstraints

from engram_events.ids import Count, Id, Sha256
from engram_events.payloads._base import Payload
from engram_events.payloads.documents import Name
from engram_events.values import Text

MAX_PASSAGE_CHARS = 32_000
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
