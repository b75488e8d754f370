"""Knowledge: facts with support, and contradictions as records."""

from typing import Literal

from pydantic import Field, model_validator

from engram_events.ids import Id, Scalar
from engram_events.payloads._base import Payload
from engram_events.payloads.records import MAX_CITED_PASSAGES, HumanEdit

FactStatus = Literal["active", "contested", "superseded", "withdrawn"]


class Support(Payload):
    """One record revision asserting a fact."""

    record_id: Id
    revision: int = Field(ge=1)
    document_id: Id | None = None
    passage_ids: list[Id] = Field(default_factory=list, max_length=MAX_CITED_PASSAGES)
    """The passages of the document the record was read from, when it cites any."""
    edit: HumanEdit | None = None
    """A curator's record (source `human`): the key, action, reason and time."""


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
    contested_by: list[Support] = Field(default_factory=list)
    """Curators' withdrawals of this value while its support still asserts it."""


class ContradictionOpened(Payload):
    """Two sources disagree on a single-valued attribute, or a curator withdrew a value that
    sources still assert."""

    contradiction_id: Id
    entity_id: Id
    attribute: str
    claims: list[Claim] = Field(min_length=1)

    @model_validator(mode="after")
    def _disagreement(self) -> "ContradictionOpened":
        """Two claims, or one a curator's withdrawal contests: one value alone is no dispute."""
        if len(self.claims) < 2 and not any(c.contested_by for c in self.claims):
            raise ValueError("a contradiction needs two claims or a contested one")
        return self


class ContradictionResolved(Payload):
    """A contradiction closed: by a caller's choice, or because one side lost its support."""

    contradiction_id: Id
    entity_id: Id
    attribute: str
    winner_fact_id: Id | None = None
    superseded_fact_ids: list[Id] = Field(default_factory=list)
    mode: Literal["manual", "automatic"]
    reason: str = Field(max_length=1000)
