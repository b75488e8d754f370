"""Knowledge: facts with support, and contradictions as records."""

from typing import Literal

from pydantic import Field

from engram_events.ids import Id, Scalar
from engram_events.payloads._base import Payload
from engram_events.payloads.records import MAX_CITED_PASSAGES

FactStatus = Literal["active", "contested", "superseded", "withdrawn"]


class Support(Payload):
    """One record revision asserting a fact."""

    record_id: Id
    revision: int = Field(ge=1)
    document_id: Id | None = None
    passage_ids: list[Id] = Field(default_factory=list, max_length=MAX_CITED_PASSAGES)
    """The passages of the document the record was read from, when it cites any."""


class FactChanged(Payload):
    """A fact was created or its support or status changed (durably, read back)."""

    fact_id: Id
    entity_id: Id
    attribute: str
    value: Scalar
    status: FactStatus
    support: list[Support]
    change: Literal["created", "support_changed", "status_changed"]


class FactWithdrawn(Payload):
    """A fact lost its last support; memories derived from it must follow."""

    fact_id: Id
    entity_id: Id
    attribute: str
    because_record_id: Id | None = None
    prune_job_id: Id | None = None


class Claim(Payload):
    """One side of a contradiction."""

    fact_id: Id
    value: Scalar
    support: list[Support]


class ContradictionOpened(Payload):
    """Two sources disagree on a single-valued attribute."""

    contradiction_id: Id
    entity_id: Id
    attribute: str
    claims: list[Claim] = Field(min_length=2)


class ContradictionResolved(Payload):
    """A contradiction closed: by a caller's choice, or because one side lost its support."""

    contradiction_id: Id
    entity_id: Id
    attribute: str
    winner_fact_id: Id | None = None
    superseded_fact_ids: list[Id] = Field(default_factory=list)
    mode: Literal["manual", "automatic"]
    reason: str = Field(max_length=1000)
