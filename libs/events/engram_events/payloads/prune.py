"""Prune requests: which records to tombstone, as one selection."""

from typing import Literal

from pydantic import Field, model_validator

from engram_events.ids import Id
from engram_events.payloads._base import Payload
from engram_events.payloads.records import RecordType


class PruneSelector(Payload):
    """Exactly one way to select records; the same filter counts and deletes."""

    older_than_days: int | None = Field(default=None, ge=0, le=36_500)
    record_ids: list[Id] | None = Field(default=None, max_length=100_000)
    record_type: RecordType | None = None
    document_id: Id | None = None
    status: Literal["active", "rejected"] | None = None
    conversation_id: Id | None = None

    @model_validator(mode="after")
    def _one_selection(self) -> "PruneSelector":
        """An empty selector would prune everything; refuse it."""
        if (
            self.older_than_days is None
            and not self.record_ids
            and self.document_id is None
            and self.conversation_id is None
        ):
            raise ValueError("give older_than_days, record_ids, document_id or conversation_id")
        return self


class PruneRequested(Payload):
    """The gateway asks extraction to prune a selection of records."""

    prune_job_id: Id
    selector: PruneSelector
