"""The ports the use cases depend on: entity storage, the knowledge vectors, the outbox and the
summariser; adapters implement them in production, fakes in tests."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from engram_enrichment.domain.model import ArticleSection
from engram_enrichment.domain.passage_rows import PassageRow
from engram_events import Envelope
from engram_vectors import HybridHit, Point, SparseVector

FACT = "fact"
ARTICLE_SECTION = "article_section"
PASSAGE = "passage"
KINDS = (FACT, ARTICLE_SECTION, PASSAGE)
"""The kinds of point in the knowledge collection (the payload's `kind`)."""
TEXT = "text"
"""The payload field holding the text a point's vectors are of, where search looks for the
query's identifiers (kept only with lexical vectors)."""


class ConcurrentUpdate(Exception):
    """Someone else wrote the entity since it was loaded; recompute from the fresh state."""


class EntityStore(Protocol):
    """Entity aggregates keyed by `tenant:entity`, plus small indexes for listings."""

    async def load(self, tenant_id: str, entity_id: str) -> dict[str, Any] | None:
        """The stored entity document, read from the database (never a cache)."""
        ...

    async def save(self, tenant_id: str, doc: dict[str, Any], expected_version: int) -> None:
        """Write the whole aggregate if its stored version is still `expected_version`."""
        ...

    async def load_many(
        self, tenant_id: str, entity_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """The stored documents of those entities that exist, by entity id, in few round trips."""
        ...

    async def save_many(
        self, tenant_id: str, writes: Sequence[tuple[dict[str, Any], int]]
    ) -> set[str]:
        """`save` for many entities at once; returns the ids that hit a concurrent update."""
        ...

    async def unconfirmed_many(
        self, tenant_id: str, intended: dict[str, dict[str, Any]]
    ) -> dict[str, list[str]]:
        """Read back entities just saved: per entity id, the parts (ids or field names) that the
        database does not hold as intended (`["entity"]` when it holds nothing); [] if all did."""
        ...

    async def index_contradictions(self, tenant_id: str, docs: list[dict[str, Any]]) -> None:
        """Upsert the listing copies of contradictions (the entity document stays the truth)."""
        ...

    async def contradiction(self, tenant_id: str, contradiction_id: str) -> dict[str, Any] | None:
        """One listing copy, which names the entity that owns the contradiction."""
        ...

    async def list_contradictions(
        self, tenant_id: str, status: str | None, limit: int, entity_id: str | None = None
    ) -> list[dict[str, Any]]:
        """The tenant's contradictions, optionally of one status and of one entity."""
        ...

    async def list_entities(
        self, tenant_id: str, entity_type: str | None, after: str | None, limit: int
    ) -> list[dict[str, Any]]:
        """Entity summaries (no facts), ordered by entity id, after a cursor."""
        ...

    async def remember_record(self, tenant_id: str, record_id: str, entity_id: str) -> None:
        """Which entity a record is about, for tombstones that do not say."""
        ...

    async def remember_records(self, tenant_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """`remember_record` for many (record id, entity id) pairs in one write."""
        ...

    async def entities_of_records(
        self, tenant_id: str, record_ids: Sequence[str]
    ) -> dict[str, str]:
        """The entity each record was about, for those ever seen, in few round trips."""
        ...


class RelationRows(Protocol):
    """The listing copies of live relations, read from either end."""

    async def put(self, tenant_id: str, rows: Sequence[dict[str, Any]]) -> None:
        """Upsert relation rows (keyed by relation id)."""
        ...

    async def remove(self, tenant_id: str, relation_ids: Sequence[str]) -> None:
        """Delete relation rows."""
        ...

    async def touching(
        self,
        tenant_id: str,
        node_ids: Sequence[str],
        end: Literal["subject", "object"],
        predicate: str | None,
        limit: int,
        fields: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Rows whose subject (or object) is one of the nodes, at most `limit`; only `fields`
        of each when named."""
        ...

    async def in_order(
        self,
        tenant_id: str,
        node_ids: Sequence[str],
        end: Literal["subject", "object"],
        predicate: str | None,
        start: tuple[str, str | None] | None,
        limit: int,
        fields: Sequence[str] | None,
        skip: Collection[str] = (),
    ) -> list[dict[str, Any]]:
        """Rows whose subject (or object) is one of the nodes, ordered by predicate then the
        other end, at most `limit`: from `start` (predicate, other end) on, or with `start`'s
        other end None, of the predicates after its predicate; none whose relation id is in
        `skip`; only `fields` of each when named."""
        ...

    async def by_id(self, tenant_id: str, relation_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The whole rows of these relations; unknown ids are left out."""
        ...

    async def present(self, tenant_id: str, entity_ids: Sequence[str]) -> set[str]:
        """Of these entities, those that exist (stored with a live fact)."""
        ...


@dataclass(frozen=True)
class Generated:
    """A summariser's answer and the model the endpoint says produced it."""

    text: str
    model: str


class SummaryFailed(Exception):
    """No usable summary; the message names the kind of failure, never any content."""


class Summariser(Protocol):
    """Turns chat messages into a short text; optional, and never trusted for facts."""

    async def summarise(self, messages: list[dict[str, str]]) -> Generated:
        """One completion, or SummaryFailed."""
        ...


class PassageRows(Protocol):
    """The passages enrichment indexes, as `passage.upserted` carried them."""

    async def put(self, rows: Sequence[PassageRow]) -> None:
        """Upsert the passages' rows."""
        ...

    async def get_many(self, tenant_id: str, passage_ids: Sequence[str]) -> dict[str, PassageRow]:
        """The stored rows of those passages that exist, by passage id."""
        ...

    async def remove(self, tenant_id: str, passage_ids: Sequence[str]) -> None:
        """Delete the passages' rows."""
        ...

    async def count_of_documents(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        """How many rows these documents' passages still have."""
        ...

    async def with_embedded_text(
        self, tenant_id: str, document_id: str, digests: Sequence[str]
    ) -> list[PassageRow]:
        """The document's rows whose embedded text has one of these digests (`embedded_sha256`),
        any version: passages whose vectors a new version's may copy."""
        ...


@dataclass(frozen=True)
class StoredPassage:
    """A passage point as the collection holds it: what a copy of its vector needs checked."""

    passage_id: str
    vector: Sequence[float]
    payload: dict[str, Any]


class KnowledgeIndex(Protocol):
    """The knowledge collection: a point per live fact and per article section."""

    @property
    def lexical(self) -> str | None:
        """The lexical encoder the collection keeps vectors of, or None (dense only)."""
        ...

    async def fingerprint(self) -> str:
        """The embedder fingerprint stored with the collection."""
        ...

    async def put_facts(
        self,
        tenant_id: str,
        facts: Sequence[tuple[str, str, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write facts' points `(entity_id, fact_id, text embedded, vector)`."""
        ...

    async def put_sections(
        self,
        tenant_id: str,
        sections: Sequence[tuple[str, ArticleSection, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write sections' points `(entity_id, section, text embedded, vector)`."""
        ...

    async def put_passages(
        self,
        tenant_id: str,
        passages: Sequence[tuple[PassageRow, str, Sequence[float]]],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Write passages' points `(row, text embedded, vector)`."""
        ...

    async def remove_passages_of(self, tenant_id: str, document_id: str) -> None:
        """Delete every passage point of a document."""
        ...

    async def count_passages_of(self, tenant_id: str, document_ids: Sequence[str]) -> int:
        """How many passage points these documents still have."""
        ...

    async def passage_points(
        self, tenant_id: str, passage_ids: Sequence[str]
    ) -> list[StoredPassage]:
        """The stored points of those passages that have one, with their vectors."""
        ...

    async def payloads(self, tenant_id: str, item_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The stored payloads of these facts' or sections' points (missing ones left out)."""
        ...

    async def remove(self, tenant_id: str, item_ids: Sequence[str]) -> None:
        """Delete the points of facts or sections that are gone."""
        ...

    async def candidates(
        self,
        tenant_id: str,
        vector: Sequence[float],
        sparse: SparseVector | None,
        limit: int,
        *,
        fingerprint: str,
        kinds: Sequence[str] | None = None,
    ) -> list[HybridHit]:
        """Dense and lexical candidates within one tenant (of these kinds), with both scores."""
        ...


class MovableKnowledge(KnowledgeIndex, Protocol):
    """A knowledge collection a reindex fills and verifies (`adapters.vectors.KnowledgeVectors`)."""

    @property
    def collection(self) -> str: ...

    async def counts(self) -> dict[str, int]:
        """Points of each kind across tenants."""
        ...

    async def points(self, tenant_id: str, item_ids: Sequence[str]) -> dict[str, Point]:
        """Stored points by item id, vectors included."""
        ...


class KnowledgeWalk(Protocol):
    """Every tenant's entities and passages in `_id` order, as a reindex walks them
    (`adapters.reindex.KnowledgeWalkStore`)."""

    async def entities(self, after: str | None, limit: int) -> list[dict[str, Any]]:
        """Stored entity documents (unpacked) after a key."""
        ...

    async def entities_by_keys(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Stored entity documents (unpacked) by `_id`."""
        ...

    async def entities_updated_between(
        self, since: datetime, until: datetime, after: str | None, limit: int
    ) -> list[dict[str, Any]]:
        """Entity documents (unpacked) written within a window, after a key."""
        ...

    async def passages(self, after: str | None, limit: int) -> list[PassageRow]:
        """Passage rows after a key."""
        ...

    async def passages_by_keys(self, keys: Sequence[str]) -> dict[str, PassageRow]:
        """Passage rows by `_id`."""
        ...


class EventStager(Protocol):
    """The outbox: events staged here are published once, after the write that owes them."""

    async def stage(self, envelopes: Iterable[Envelope[Any]]) -> int:
        """Stage the events; returns how many."""
        ...
