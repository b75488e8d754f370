"""Acknowledgements that a service finished its part of a prune."""

from typing import Literal

from pydantic import Field

from engram_events.ids import Count, Id
from engram_events.payloads._base import Payload

Stage = Literal["records", "documents", "facts", "articles", "memories", "vectors", "conversations"]


class TombstoneApplied(Payload):
    """A service's deletes for a prune job are durable; counts per stage.

    `source_ids` are the tombstoned ids this acknowledgement covers (the records, facts or
    documents the service was told about); `tombstoned_ids` are what the service itself
    tombstoned in turn (records, withdrawn facts, memories), which the next stage must cover.
    """

    prune_job_id: Id
    service: Id
    counts: dict[Stage, Count]
    tombstoned_ids: list[Id] = Field(default_factory=list, max_length=100_000)
    source_ids: list[Id] = Field(default_factory=list, max_length=100_000)
