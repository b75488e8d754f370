"""The entity aggregate: its facts, their support, its contradictions and its records."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from engram_enrichment.domain.clock import as_utc
from engram_events.ids import Scalar
from engram_events.payloads.records import HumanEdit, Reference

FactStatus = Literal["active", "contested", "superseded", "withdrawn"]
Change = Literal["created", "support_changed", "status_changed"]
LIVE: frozenset[str] = frozenset({"active", "contested"})


class CuratorEdit(BaseModel):
    """What makes a record of source `human`: the curator's key, the time and the reason."""

    key_id: str
    action: Literal["assert", "withdraw"]
    reason: str
    at: datetime


def curator_edit(edit: HumanEdit | None) -> CuratorEdit | None:
    """A `human` record's edit as the aggregate keeps it."""
    if edit is None:
        return None
    return CuratorEdit(
        key_id=edit.key_id, action=edit.action, reason=edit.reason, at=as_utc(edit.at)
    )


def human_edit(edit: CuratorEdit | None) -> HumanEdit | None:
    """A kept edit as the event contract carries it."""
    if edit is None:
        return None
    return HumanEdit(key_id=edit.key_id, action=edit.action, reason=edit.reason, at=edit.at)


class SupportRef(BaseModel):
    """One record revision asserting (or, in `contested_by`, withdrawing) a fact, with the
    document (and the passages of it, when the record cites any) it came from, or the curator's
    edit when the record is a human one."""

    record_id: str
    revision: int
    document_id: str | None = None
    locator: str = ""
    passage_ids: list[str] = Field(default_factory=list)
    edit: CuratorEdit | None = None
    valid_from: datetime | None = None
    """When the record says its value became true (None: not stated, so from `recorded_at`)."""
    valid_to: datetime | None = None
    """When the record says it stopped being true (exclusive)."""
    closed_at: datetime | None = None
    """Where a later period's different value closed this one (a time slice, not a conflict)."""
    recorded_at: datetime | None = None
    """When Engram learned it (the record revision's time)."""
    retired_at: datetime | None = None
    """When Engram stopped holding it (a later revision, a tombstone); set only on `retired`."""

    @property
    def starts(self) -> datetime | None:
        """The start of its valid period: stated, else when it was recorded."""
        return self.valid_from or self.recorded_at

    @property
    def ends(self) -> datetime | None:
        """The end of its valid period: stated, else where a later value closed it, else open."""
        return self.valid_to or self.closed_at

    @property
    def source(self) -> str:
        """`human` for a curator's edit, else `document` or `import`."""
        return "human" if self.edit else "document" if self.document_id else "import"

    def shown(self) -> dict[str, Any]:
        """As callers see it: every field and the source."""
        return {**self.model_dump(), "source": self.source}


class HistoryEntry(BaseModel):
    """A status change; hashes only, so a withdrawn value leaves no content behind."""

    at: datetime
    status: FactStatus
    value_sha256: str
    support_count: int
    cause: str


class RelationTarget(BaseModel):
    """What makes a fact a relation: the entity its value names, under a predicate; a `many`
    relation may hold several targets without contradiction."""

    predicate: str
    object_id: str
    object_type: str
    many: bool = False


class Fact(BaseModel):
    """(entity, attribute, value) with the records that assert it; a reference field's fact
    is also a relation to the entity its value names."""

    fact_id: str
    attribute: str
    value: Scalar = None
    value_sha256: str
    status: FactStatus = "active"
    support: list[SupportRef] = Field(default_factory=list)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    first_seen: datetime
    last_seen: datetime
    superseded_by: str | None = None
    contradiction_id: str | None = None
    withdrawn_because: str | None = None
    contested_by: list[SupportRef] = Field(default_factory=list)
    """Curators' withdrawals of this value while records still assert it (a contradiction)."""
    overruled: list[str] = Field(default_factory=list)
    """Withdrawals (`record_id@revision`) a resolution kept this value over; a curator's next
    withdrawal is a new revision and contests it again."""
    last_cause: str | None = None
    last_change: Change | None = None
    history: list[HistoryEntry] = Field(default_factory=list)
    relation: RelationTarget | None = None
    closed_by: str | None = None
    """The fact whose later period closed every period of this one (status `superseded`)."""
    retired: list[SupportRef] = Field(default_factory=list)
    """Support Engram held once and no longer does, with when (what `as_of` reads)."""
    recorded_at: datetime | None = None
    """When Engram first learned the value."""
    retired_at: datetime | None = None
    """When it stopped being a current claim (withdrawn or superseded)."""

    @property
    def live(self) -> bool:
        """Active or contested: a current claim about the entity."""
        return self.status in LIVE

    @property
    def held(self) -> bool:
        """Live, or a time slice a later period closed: what reads in time may still show."""
        return self.status in LIVE or self.closed_by is not None


class Claim(BaseModel):
    """One side of a contradiction; a withdrawn side keeps only its value hash."""

    fact_id: str
    value: Scalar = None
    value_sha256: str
    support: list[SupportRef] = Field(default_factory=list)
    contested_by: list[SupportRef] = Field(default_factory=list)
    withdrawn: bool = False


class Resolution(BaseModel):
    """Who won and why, whether a caller chose or a side lost its support."""

    winner_fact_id: str | None
    superseded_fact_ids: list[str] = Field(default_factory=list)
    mode: Literal["manual", "automatic"]
    reason: str


class Contradiction(BaseModel):
    """Two or more live values of a single-valued attribute, from different records."""

    contradiction_id: str
    attribute: str
    status: Literal["open", "resolved"] = "open"
    claims: list[Claim]
    opened_at: datetime
    opened_by: str
    resolved_at: datetime | None = None
    resolved_by: str | None = None
    resolution: Resolution | None = None
    last_cause: str | None = None


class Withdrawal(BaseModel):
    """A curator's record withdrawing one value of an attribute (every value, without a hash)."""

    attribute: str
    value_sha256: str | None = None
    ref: SupportRef


class RecordState(BaseModel):
    """The latest revision seen of one record about this entity."""

    record_id: str
    revision: int
    observed_at: datetime
    document_id: str | None = None
    tombstoned: bool = False
    withdraws: Withdrawal | None = None


class ArticleSection(BaseModel):
    """One attribute's part of the article: what it cites, and the hash of the text embedded."""

    section_id: str
    attribute: str
    status: Literal["active", "removed"] = "active"
    text_sha256: str | None = None
    fact_ids: list[str] = Field(default_factory=list)
    record_ids: list[str] = Field(default_factory=list)
    last_cause: str | None = None


class ArticleSummary(BaseModel):
    """Generated prose kept beside the facts, never instead of them; tied to a facts hash."""

    text: str
    model: str
    generated_at: datetime
    facts_sha256: str


class Entity(BaseModel):
    """One entity of one tenant: the unit that is loaded, changed and written atomically."""

    tenant_id: str
    entity_id: str
    entity_type: str
    version: int = 0
    facts: dict[str, Fact] = Field(default_factory=dict)
    contradictions: dict[str, Contradiction] = Field(default_factory=dict)
    records: dict[str, RecordState] = Field(default_factory=dict)
    article: str = ""
    sections: dict[str, ArticleSection] = Field(default_factory=dict)
    summary: ArticleSummary | None = None
    single_valued: list[str] | None = None
    """What the latest record's type definition calls single-valued (None: the schema file
    decides), so a tenant's declared type governs contradictions."""

    def open_contradiction(self, attribute: str) -> Contradiction | None:
        """The open contradiction on an attribute (there is at most one)."""
        for item in self.contradictions.values():
            if item.attribute == attribute and item.status == "open":
                return item
        return None

    def state(self) -> dict[str, Any]:
        """Everything that matters for equality, without the write version."""
        return self.model_dump(mode="json", exclude={"version"})


class RecordAssertion(BaseModel):
    """What one record revision says about its entity."""

    record_id: str
    record_type: str
    revision: int
    attributes: dict[str, Scalar]
    document_id: str | None = None
    locator: str = ""
    passage_ids: list[str] = Field(default_factory=list)
    observed_at: datetime
    edit: CuratorEdit | None = None
    references: list[Reference] = Field(default_factory=list)
    single_valued: list[str] | None = None
    """The single-valued attributes its type's definition declares (None: not declared)."""
    valid_from: datetime | None = None
    valid_to: datetime | None = None
