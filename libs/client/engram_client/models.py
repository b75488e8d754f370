"""Response models: the fields callers rely on, typed; anything newer the API adds is kept."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ApiModel(BaseModel):
    """Extra fields are kept (as attributes) so a newer gateway never breaks an older client."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Agent(ApiModel):
    """A registered agent."""

    agent_id: str
    name: str | None = None
    created_at: datetime | None = None


class ApiKey(ApiModel):
    """One of the tenant's API keys as its admins see it: never the secret."""

    key_id: str
    prefix: str
    name: str | None = None
    role: str
    created_at: datetime | None = None
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


class IssuedApiKey(ApiKey):
    """A key just issued: `key` is the plaintext, shown in this answer only; `replaces` the key
    a rotation revoked."""

    key: str
    replaces: str | None = None


class AuditActor(ApiModel):
    """Who acted: an API key (`kind` `key`, its id and role) or the platform (`system`)."""

    kind: str
    key_id: str | None = None
    role: str


class AuditEntry(ApiModel):
    """One audited action: ids, counts and the sha256 of a reason, never content."""

    entry_id: str
    at: datetime
    actor: AuditActor
    action: str
    target: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    reason_sha256: str | None = None


class AuditPage(ApiModel):
    """One page of the audit log, newest first, and the cursor to the next (None at the end)."""

    entries: list[AuditEntry] = Field(default_factory=list)
    next_cursor: str | None = None


class Author(ApiModel):
    """Which API key wrote a memory: its id (never the secret) and role."""

    key_id: str
    role: str


class MemoryAccepted(ApiModel):
    """A memory write's answer: queued (202, `pending`), or `deduplicated` (200) when a live
    memory of the same agent and scope already holds the content; `memory_id` is then that one's."""

    memory_id: str
    status: str = "pending"
    deduplicated: bool = False
    status_url: str | None = None
    supersedes: str | None = None
    """For an edit: the version this one replaces."""


class Memory(ApiModel):
    """A memory with its status (`pending|active|superseded|withdrawn|rejected|expired`) and
    provenance; a rejected one says why (`reason`, and `duplicate_of` for a duplicate), one
    that expires says when (`expires_at`; `expired_at` once its vector is gone)."""

    memory_id: str
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    status: str
    reason: str | None = None
    duplicate_of: str | None = None
    type: str | None = None
    content: str | None = None
    metadata: dict[str, Any] | None = None
    derived_from: list[str] | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    provenance: dict[str, Any] | None = None
    author: Author | None = None
    edit_reason: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    expired_at: datetime | None = None


class MemoryVersion(ApiModel):
    """One version of an edited memory: its content while held, who wrote it (the key's id and
    role, never its secret), when, and why (`edit_reason`, for an edit)."""

    memory_id: str
    status: str
    type: str | None = None
    content: str | None = None
    metadata: dict[str, Any] | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    author: Author | None = None
    edit_reason: str | None = None
    created_at: datetime | None = None


class MemoryHistory(ApiModel):
    """Every version of a memory's chain, oldest first; the live one is `active`."""

    memory_id: str
    agent_id: str | None = None
    versions: list[MemoryVersion]


class RetentionRule(ApiModel):
    """Keep at most `max_count` of an agent's memories of `type`, none older than
    `max_age_seconds`."""

    type: str
    max_count: int | None = None
    max_age_seconds: float | None = None


class Retention(ApiModel):
    """An agent's own rules (`rules`) and the deployment's defaults for the types it set none
    for (`defaults`)."""

    agent_id: str
    rules: list[RetentionRule]
    defaults: list[RetentionRule] = []


class ConversationAccepted(ApiModel):
    """A conversation's 202: queued (`pending`), with the URL reporting what became of it."""

    conversation_id: str
    status: str = "pending"
    status_url: str | None = None


class ConversationMessage(ApiModel):
    """One message of a conversation and its outcome: `memory` (with `memory_id` and
    `memory_status`), `kept` (system and tool messages), `read_by_model` or `no_content`."""

    index: int
    role: str
    outcome: str | None = None
    memory_id: str | None = None
    memory_status: str | None = None
    duplicate_of: str | None = None


class ConversationFact(ApiModel):
    """A fact the model proposed and its decision (`add`, `supersede` naming `supersedes`, or
    `skip` naming `known_as`), with the memories shown, the model reported and an output hash."""

    index: int
    content: str | None = None
    decision: str | None = None
    supersedes: str | None = None
    known_as: str | None = None
    candidates: list[str] = Field(default_factory=list)
    model: str | None = None
    output_sha256: str | None = None
    memory_id: str | None = None
    memory_status: str | None = None


class Conversation(ApiModel):
    """A conversation: `processing`, `processed`, `failed` (with `error`) or `deleted`; `settled`
    once processing is over and no memory it wrote is pending; `memories` counts them by status."""

    conversation_id: str
    agent_id: str | None = None
    status: str
    settled: bool = False
    mode: str | None = None
    error: str | None = None
    user_id: str | None = None
    session_id: str | None = None
    memories: dict[str, int] = Field(default_factory=dict)
    model_calls: int = 0
    messages: list[ConversationMessage] = Field(default_factory=list)
    facts: list[ConversationFact] | None = None


class ConversationDeleting(ApiModel):
    """The 202 of a conversation's deletion: the prune job withdrawing what it derived."""

    conversation_id: str
    prune_job_id: str
    status: str = "running"
    status_url: str | None = None


class MemoriesCleared(ApiModel):
    """How many of an agent's memories (or of the scope asked for) were withdrawn."""

    agent_id: str
    withdrawn: int = 0


class MemoryPage(ApiModel):
    """One page of memories and the cursor to the next (None at the end)."""

    memories: list[Memory] = Field(default_factory=list)
    next_cursor: str | None = None


class MemoryCount(ApiModel):
    """How many memories a listing's selection holds, in total and per status and type."""

    count: int = 0
    by_status: dict[str, int] = Field(default_factory=dict)
    by_type: dict[str, int] = Field(default_factory=dict)


class RecallScores(ApiModel):
    """Every score that placed a hit: the dense cosine, the lexical score (None when the hit
    was not a lexical candidate), and the fused score the hits are ordered by."""

    dense: float
    lexical: float | None = None
    fused: float


class RecallHit(ApiModel):
    """One recalled memory: `score` is the dense cosine the floor applies to, `scores` all of
    them; scope and supersession are as stored."""

    memory_id: str
    content: str | None = None
    score: float
    scores: RecallScores
    type: str | None = None
    status: str | None = None
    metadata: dict[str, Any] | None = None
    user_id: str | None = None
    session_id: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    provenance: dict[str, Any] | None = None
    created_at: datetime | None = None


class Recall(ApiModel):
    """Hits at or above `floor` in fused order, the `mode` that ranked them (`hybrid`, `dense`
    or `lexical`), and how many were dropped below the floor."""

    results: list[RecallHit] = Field(default_factory=list)
    mode: str
    floor: float | None = None
    dropped_below_floor: int = 0


class DocumentAccepted(ApiModel):
    """The 202 for an upload: the stable document id and the version this content became."""

    document_id: str
    version: str | None = None
    status: str = "pending"
    status_url: str | None = None


class DocumentVersion(ApiModel):
    """One version's extraction outcome."""

    version: str
    status: str | None = None
    attempts: int = 0
    last_error: str | None = None
    record_count: int = 0


class Document(ApiModel):
    """A document's status (`pending|extracted|failed|deleted`) and its versions."""

    document_id: str
    status: str
    name: str | None = None
    mime: str | None = None
    source: str | None = None
    version: str | None = None
    latest_version: str | None = None
    record_count: int = 0
    rejected_count: int = 0
    attempts: int = 0
    error: str | None = None
    versions: list[DocumentVersion] = Field(default_factory=list)


class PruneJobAccepted(ApiModel):
    """The 202 for a prune or a document delete: the job to follow."""

    prune_job_id: str
    status: str = "running"
    status_url: str | None = None


class Acknowledgement(ApiModel):
    """How many acknowledgements a service owes a prune job and how many are still missing."""

    expected: int = 0
    pending: int = 0


class PruneJob(ApiModel):
    """A prune job: counts per stage, acknowledgements per service, and `verified_empty`."""

    prune_job_id: str
    status: str
    kind: str | None = None
    selector: dict[str, Any] = Field(default_factory=dict)
    selector_sizes: dict[str, int] = Field(default_factory=dict)
    selector_truncated: bool = False
    counts: dict[str, int] = Field(default_factory=dict)
    acknowledgements: dict[str, Acknowledgement] = Field(default_factory=dict)
    verified_empty: bool | None = None
    verification: dict[str, Any] | None = None
    created_at: datetime | None = None
    completed_at: datetime | None = None


class ImportAccepted(ApiModel):
    """The 202 for a records import."""

    import_id: str
    status: str = "pending"
    status_url: str | None = None


class ImportStatus(ApiModel):
    """An import's outcome as extraction reports it (`pending` until it has run)."""

    import_id: str
    status: str


class TypeDefinitionRef(ApiModel):
    """Which definition of its type a record was built with: `bundled` or `tenant`, and its
    version."""

    origin: str
    version: int


class RecordLineage(ApiModel):
    """Where a record came from."""

    document_id: str | None = None
    document_version: str | None = None
    locator: str = ""
    source_item_id: str | None = None
    type_definition: TypeDefinitionRef | None = None


class RecordType(ApiModel):
    """A record type: whose definition (`bundled` or `tenant`), its version, and the definition
    (`id_fields`, `required_fields`, `single_valued`, ...; None for a retired version)."""

    name: str
    origin: str
    version: int
    definition: dict[str, Any] | None = None
    retired: bool = False
    changed_at: datetime | None = None
    changed_by: str | None = None
    bundled: bool | None = None


class RecordTypeVersions(ApiModel):
    """The tenant's versions of one type, oldest first, and the bundled type of that name."""

    name: str
    versions: list[RecordType] = Field(default_factory=list)
    bundled: RecordType | None = None


class RecordRevision(ApiModel):
    """A past revision: its content hash, never the content."""

    revision: int
    content_sha256: str | None = None
    observed_at: datetime | None = None


class Record(ApiModel):
    """One source's assertion about one entity, with its lineage (and revisions when read)."""

    record_id: str
    record_type: str | None = None
    entity_id: str | None = None
    status: str = "active"
    revision: int | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)
    content_sha256: str | None = None
    lineage: RecordLineage | None = None
    revisions: list[RecordRevision] | None = None
    updated_at: datetime | None = None


class RecordPage(ApiModel):
    """One page of records and the cursor to the next (None at the end)."""

    records: list[Record] = Field(default_factory=list)
    next_cursor: str | None = None


class Fact(ApiModel):
    """A consolidated fact with its status and supporting records."""

    fact_id: str
    attribute: str
    value: Any = None
    status: str
    contested: bool = False
    support: list[dict[str, Any]] = Field(default_factory=list)
    contested_by: list[dict[str, Any]] = Field(
        default_factory=list, description="curators' withdrawals of this value (source human)"
    )


class Entity(ApiModel):
    """An entity's Markdown article and the facts it was rendered from."""

    entity_id: str
    entity_type: str | None = None
    article: str | None = None
    facts: list[Fact] = Field(default_factory=list)
    contradictions: list[dict[str, Any]] = Field(default_factory=list)


class EntityPage(ApiModel):
    """A page of entity summaries; `next_after` continues the listing."""

    entities: list[dict[str, Any]] = Field(default_factory=list)
    next_after: str | None = None


class Span(ApiModel):
    """Where a passage's text sits in its document version's extracted text."""

    start: int
    end: int


class KnowledgeHit(ApiModel):
    """One fact, article section or document passage found: facts and sections with their
    status, contested flag and support, passages with their citation (document, version, name,
    heading path, page, span, text); `score` is the dense score the floor applies to, `scores`
    every score that placed it."""

    kind: str | None = None
    score: float | None = None
    scores: RecallScores | None = None
    fact_id: str | None = None
    entity_id: str | None = None
    attribute: str | None = None
    value: Any = None
    status: str | None = None
    contested: bool = False
    support: list[dict[str, Any]] = Field(default_factory=list)
    passage_id: str | None = None
    document_id: str | None = None
    version: str | None = None
    name: str | None = None
    heading_path: list[str] | None = None
    page: int | None = None
    page_end: int | None = None
    span: Span | None = None
    text: str | None = None
    expanded: dict[str, Any] | None = None
    """On a fact added by `expand`: the hit's entity it follows (`from`), how many relations
    away it is (`distance`) and the relation first walked (`relation_id`)."""


class Relation(ApiModel):
    """One relation as walked from `from` to `to` (`direction` out: `from` is the subject), how
    many hops from the start, whether `to` exists yet, and its status and support."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, serialize_by_alias=True)

    relation_id: str
    subject_id: str
    predicate: str
    object_id: str
    object_type: str | None = None
    direction: str
    depth: int = 1
    from_: str = Field(alias="from")
    to: str
    resolved: bool = True
    status: str | None = None
    contradiction_id: str | None = None
    attribute: str | None = None
    value: Any = None
    support: list[dict[str, Any]] = Field(default_factory=list)


class RelationPage(ApiModel):
    """A page of an entity's relations, nearest first; `next_cursor` continues it."""

    entity_id: str
    relations: list[Relation] = Field(default_factory=list)
    next_cursor: str | None = None
    truncated: bool = False


class RelationPath(ApiModel):
    """One path: its relations in order from the start."""

    length: int
    edges: list[Relation] = Field(default_factory=list)


class Paths(ApiModel):
    """The shortest paths between two entities (none when they are further apart than asked)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, serialize_by_alias=True)

    from_: str = Field(alias="from")
    to: str
    length: int | None = None
    paths: list[RelationPath] = Field(default_factory=list)
    truncated: bool = False


class Passage(ApiModel):
    """One passage of a document version, in order, with its heading path, pages and span."""

    passage_id: str
    ordinal: int
    heading_path: list[str] = Field(default_factory=list)
    start: int
    end: int
    page: int | None = None
    page_end: int | None = None
    text: str
    text_sha256: str | None = None


class PassagePage(ApiModel):
    """A page of a document's current passages; `next_after` continues the listing."""

    document_id: str
    version: str | None = None
    name: str | None = None
    passages: list[Passage] = Field(default_factory=list)
    next_after: int | None = None


class KnowledgeSearch(ApiModel):
    """Hits at or above `floor` (or matching an exact identifier), and how many were dropped."""

    results: list[KnowledgeHit] = Field(default_factory=list)
    mode: str | None = None
    floor: float | None = None
    dropped_below_floor: int = 0


class Contradiction(ApiModel):
    """Two or more claims on one single-valued attribute, and whether it is resolved."""

    contradiction_id: str
    status: str
    entity_id: str | None = None
    attribute: str | None = None


class FactEdit(ApiModel):
    """A curator's edit as the gateway queued it: a record of source `human` once extraction
    keeps it."""

    status: str
    entity_id: str
    attribute: str
    value: Any = None
    action: str
    key_id: str
    reason: str
    at: datetime
    entity_url: str


class Resolution(ApiModel):
    """A resolved contradiction and the entity as regenerated."""

    contradiction: Contradiction
    entity: Entity | None = None


class Lineage(ApiModel):
    """What an id derives and what it derives from; the exact edges are the gateway's."""

    id: str | None = None


class DeadLetter(ApiModel):
    """A failed event in the DLQ: who failed it, why, how often; never its payload."""

    letter_id: str
    consumer: str
    topic: str | None = None
    event_type: str | None = None
    event_id: str | None = None
    error_type: str | None = None
    error: str | None = None
    attempts: int = 0
    failed_at: datetime | None = None
    replayed_at: datetime | None = None


class DeadLetterItem(ApiModel):
    """The item a dead-lettered event named (a memory, a conversation, a document, ...)."""

    type: str
    id: str


class TenantDeadLetter(ApiModel):
    """One of the caller's dead letters (`/v1/dead-letters`): what failed, why, which item."""

    letter_id: str
    event_id: str | None = None
    event_type: str | None = None
    consumer: str
    error_type: str
    reason: str
    attempts: int
    failed_at: datetime
    item: DeadLetterItem | None = None
    replayed: bool = False


class Health(ApiModel):
    """Liveness (`/healthz`) or readiness (`/readyz` with per-dependency checks)."""

    status: str
    checks: dict[str, Any] = Field(default_factory=dict)
