"""Records: one source's assertion about one entity, owned by extraction."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr, StringConstraints

from engram_events.ids import AttributeName, Attributes, Id, Sha256
from engram_events.payloads._base import Payload
from engram_events.values import Storable, Text

MAX_IMPORT_ATTRIBUTES = 500
ImportValue = Annotated[
    Annotated[StrictStr, StringConstraints(max_length=32_000)]
    | StrictInt
    | StrictFloat
    | StrictBool
    | None,
    Storable,
]
"""One imported value: a scalar as JSON gave it (no coercion), and one storage keeps as given."""
ImportRow = Annotated[
    dict[AttributeName, ImportValue], Field(min_length=1, max_length=MAX_IMPORT_ATTRIBUTES)
]

MAX_CITED_PASSAGES = 32
"""Passages one record may cite (the LLM extractor keeps the first, in document order)."""
RecordType = Annotated[
    str, StringConstraints(min_length=1, max_length=100, pattern=r"^[a-z][a-z0-9_]*$")
]
TombstoneReason = Literal["prune", "document_deleted", "drive_removed", "absent_from_version"]


EditAction = Literal["assert", "withdraw"]
Reason = Annotated[Text, StringConstraints(min_length=1, max_length=2000)]


class HumanEdit(Payload):
    """A curator's edit: whose key, when, why, and whether it asserts or withdraws the value."""

    key_id: Id
    action: EditAction
    reason: Reason
    at: datetime


class Lineage(Payload):
    """Exactly where a record came from."""

    document_id: Id | None = None
    document_version: Id | None = None
    locator: Annotated[str, StringConstraints(max_length=512)] = ""
    source_item_id: str | None = None
    model: Annotated[str, StringConstraints(max_length=200)] | None = None
    """The model id the extractor's endpoint reported (LLM extraction only)."""
    passage_ids: list[Id] = Field(default_factory=list, max_length=MAX_CITED_PASSAGES)
    """The passages of the document version the record was read from (LLM extraction of a
    document with passages; see `passage.upserted`)."""
    edit: HumanEdit | None = None
    """Set on a record of source `human`: a curator's edit of one attribute (see
    `fact.edit_requested`)."""


MAX_REFERENCES = 100
"""Targets one record may reference, over all its declared reference fields."""
Predicate = Annotated[
    str, StringConstraints(min_length=1, max_length=100, pattern=r"^[a-z][a-z0-9_]*$")
]


class ReferenceTarget(Payload):
    """One entity a reference field names: the key as written and the entity id it makes."""

    key: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    entity_id: Id


class Reference(Payload):
    """A declared reference field as this record fills it: the relation's predicate, the target
    type, whether several targets are allowed, and the entities named (with the ids their own
    records would get, so the relation meets them when they appear)."""

    field: AttributeName
    predicate: Predicate
    object_type: RecordType
    many: bool = False
    targets: list[ReferenceTarget] = Field(min_length=1, max_length=MAX_REFERENCES)


class TypeDefinition(Payload):
    """The definition of its type a record was built with: the bundled file's or the tenant's
    (`/v1/schema/types`), its version, and the attributes it calls single-valued (None: the
    enrichment service's own schema decides)."""

    origin: Literal["bundled", "tenant"]
    version: int = Field(ge=1)
    single_valued: list[AttributeName] | None = None


class RecordUpserted(Payload):
    """A record's current revision, announced after it is durable."""

    record_id: Id
    record_type: RecordType
    entity_id: Id
    revision: int = Field(ge=1)
    attributes: Attributes
    content_sha256: Sha256
    lineage: Lineage
    observed_at: datetime
    references: list[Reference] = Field(default_factory=list, max_length=MAX_REFERENCES)
    """The record type's declared reference fields this record fills (optional: records of a
    type without references, and producers before relations, carry none)."""
    type_definition: TypeDefinition | None = None
    """Set when the record's type is declared; absent for an undeclared type."""
    valid_from: datetime | None = None
    """When the record's values became true, as its type's `valid_from_field` states (optional:
    absent, they are true from `observed_at`, the record's own time)."""
    valid_to: datetime | None = None
    """When they stopped being true (exclusive), as its type's `valid_to_field` states."""


class RecordTombstoned(Payload):
    """A record is gone; everything derived from it must follow."""

    record_id: Id
    entity_id: Id | None = None
    reason: TombstoneReason
    prune_job_id: Id | None = None
    content_sha256: Sha256
    last_revision: int = Field(ge=1)
    document_id: Id | None = None


class RecordsImportRequested(Payload):
    """Structured rows imported without extraction (the non-AI path)."""

    import_id: Id
    source: Annotated[Text, StringConstraints(min_length=1, max_length=200)]
    record_type: RecordType
    rows: list[ImportRow] = Field(min_length=1, max_length=10_000)
    key_field: str | None = None


class FactEditRequested(Payload):
    """A curator asserts or withdraws one value of one entity's attribute; extraction keeps it as
    a record of source `human`, one per (entity, attribute, key), so a new edit replaces it."""

    entity_id: Id
    attribute: AttributeName
    value: ImportValue = None
    """The value asserted, or the value withdrawn (None: every value of the attribute)."""
    edit: HumanEdit


class RestoredRecord(Payload):
    """One record of an exported tenant as it was: its id there, what it asserted and where in
    its source it was read (the passages it cited are not restored)."""

    source_record_id: Id
    record_type: RecordType
    entity_id: Id
    attributes: Attributes
    locator: Annotated[str, StringConstraints(max_length=512)] = ""


class RecordsRestoreRequested(Payload):
    """An import restores one source item's records as an export held them, without extracting
    anything again: ids derive from the target tenant and the source record's id, so a second
    run revises nothing; a document's records are added, never retiring others of it."""

    restore_id: Id
    source_tenant: Id
    source_item: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    default_type: RecordType
    document_id: Id | None = None
    document_version: Id | None = None
    source_item_id: str | None = None
    model: Annotated[str, StringConstraints(max_length=200)] | None = None
    records: list[RestoredRecord] = Field(min_length=1, max_length=1000)
