"""The audit log: which key (or the system) did what to which ids, and when, per tenant.

An entry names ids, counts and the sha256 of any free text (a reason), never content: no
memory text, fact value, reason text or key secret. The gateway and the memory service (its
expiry sweeper) each keep entries in their own `audit_log` collection; the gateway lists both
as one log, newest first, by a keyset on (`at`, `entry_id`) that both sides apply alike.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pymongo import ASCENDING, DESCENDING, IndexModel

from engram_platform.indexes import Indexes
from engram_platform.mongo import insert_new

AUDIT = "audit_log"
INDEXES: Indexes = {
    AUDIT: [IndexModel([("tenant_id", ASCENDING), ("at", DESCENDING), ("entry_id", DESCENDING)])],
}

Action = Literal[
    "memory.edited",
    "memory.expired",
    "fact.asserted",
    "fact.withdrawn",
    "retention.set",
    "import.started",
    "import.finished",
    "export.started",
    "key.created",
    "key.revoked",
    "key.rotated",
]
ACTIONS: tuple[str, ...] = Action.__args__  # type: ignore[attr-defined]
MEMORY_ACTIONS = frozenset({"memory.expired"})
"""Actions whose entries the memory service keeps (its sweeper's); the gateway keeps the rest."""
SYSTEM = "system"


class BadCursor(ValueError):
    """A cursor the audit listing did not hand out."""


class Actor(BaseModel):
    """Who acted: an API key (its id and role) or the platform itself (`system`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["key", "system"]
    key_id: str | None = None
    role: str


SYSTEM_ACTOR = Actor(kind="system", role=SYSTEM)


class AuditEntry(BaseModel):
    """One audited action: ids, counts and hashes only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entry_id: str
    tenant_id: str
    at: datetime
    actor: Actor
    action: Action
    target: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    reason_sha256: str | None = None

    def row(self) -> dict[str, Any]:
        """The stored document: keyed by tenant and entry id, with every target id findable."""
        return {
            "_id": f"{self.tenant_id}:{self.entry_id}",
            **self.model_dump(),
            "target_ids": sorted(set(self.target.values())),
        }

    def shown(self) -> dict[str, Any]:
        """What the tenant's admin reads (JSON values, without the tenant)."""
        return self.model_dump(mode="json", exclude={"tenant_id"})


def sha256_of(text: str | None) -> str | None:
    """The hash that stands for a free text (a reason) in an entry."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_id_for(tenant_id: str, action: str, *parts: str) -> str:
    """A deterministic entry id: the same action on the same ids is one entry, however often a
    retry or a repeated sweep records it."""
    digest = hashlib.sha256("\x1f".join((tenant_id, action, *parts)).encode("utf-8"))
    return f"aud_{digest.hexdigest()[:32]}"


def audit_time(moment: datetime) -> datetime:
    """A time as the database keeps it (UTC, milliseconds), so a cursor compares equal."""
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def entry_from_row(row: Mapping[str, Any]) -> AuditEntry:
    """A stored document as an entry (the database hands times back naive)."""
    fields = {k: v for k, v in row.items() if k not in ("_id", "target_ids")}
    fields["at"] = audit_time(fields["at"])
    return AuditEntry.model_validate(fields)


@dataclass(frozen=True)
class Position:
    """The last entry a page returned: the next page starts strictly before it."""

    at: datetime
    entry_id: str


def encode_cursor(entry: AuditEntry) -> str:
    """The opaque cursor past an entry."""
    body = {"a": entry.at.isoformat(), "e": entry.entry_id}
    raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> Position:
    """The position a cursor names; BadCursor when it is not one of ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        body = json.loads(raw)
        position = Position(datetime.fromisoformat(body["a"]), str(body["e"]))
        if position.at.tzinfo is None:
            raise ValueError("a naive time")
        return Position(audit_time(position.at), position.entry_id)
    except (ValueError, KeyError, TypeError, OverflowError) as bad:
        raise BadCursor("the cursor is not one this listing returned") from bad


@dataclass(frozen=True)
class AuditQuery:
    """One page's selection: actions (any, when empty), a time window, a target id, and the
    position to continue before."""

    limit: int
    actions: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    target: str | None = None
    before: Position | None = None

    def wants(self, actions: Iterable[str]) -> bool:
        """Whether any of these actions can be in the page."""
        return not self.actions or bool(set(self.actions) & set(actions))

    def filter(self, tenant_id: str) -> dict[str, Any]:
        """The database filter for this selection, within the tenant."""
        query: dict[str, Any] = {"tenant_id": tenant_id}
        if self.actions:
            query["action"] = {"$in": list(self.actions)}
        window: dict[str, Any] = {}
        if self.since is not None:
            window["$gte"] = audit_time(self.since)
        if self.until is not None:
            window["$lt"] = audit_time(self.until)
        if window:
            query["at"] = window
        if self.target is not None:
            query["target_ids"] = self.target
        if self.before is not None:
            query["$or"] = [
                {"at": {"$lt": self.before.at}},
                {"at": self.before.at, "entry_id": {"$lt": self.before.entry_id}},
            ]
        return query


class AuditPageRequest(BaseModel):
    """An `AuditQuery` as the gateway sends it to the memory service's internal route."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(ge=1, le=1001)
    actions: list[Action] = Field(default_factory=list)
    since: datetime | None = None
    until: datetime | None = None
    target: str | None = Field(default=None, max_length=256)
    before_at: datetime | None = None
    before_entry_id: str | None = Field(default=None, max_length=64)

    @classmethod
    def of(cls, query: AuditQuery) -> AuditPageRequest:
        """The request for a query."""
        before = query.before
        return cls(
            limit=query.limit,
            actions=list(query.actions),
            since=query.since,
            until=query.until,
            target=query.target,
            before_at=None if before is None else before.at,
            before_entry_id=None if before is None else before.entry_id,
        )

    def query(self) -> AuditQuery:
        """The query this request carries."""
        before = None
        if self.before_at is not None and self.before_entry_id is not None:
            before = Position(audit_time(self.before_at), self.before_entry_id)
        return AuditQuery(
            limit=self.limit,
            actions=tuple(self.actions),
            since=self.since,
            until=self.until,
            target=self.target,
            before=before,
        )


def newest_first(pages: Iterable[Sequence[AuditEntry]], limit: int) -> list[AuditEntry]:
    """Pages each sorted newest first, merged into one, cut at `limit`."""
    merged = heapq.merge(*pages, key=lambda e: (e.at, e.entry_id), reverse=True)
    return list(itertools.islice(merged, limit))


class AuditLog:
    """A service's audit entries; `_id` is `tenant:entry_id`, so a repeat inserts nothing."""

    def __init__(self, db: Any) -> None:
        self.collection = db[AUDIT]

    async def record(self, entries: Sequence[AuditEntry]) -> None:
        """Store the entries; ones already stored are left as they are."""
        await insert_new(self.collection, [entry.row() for entry in entries])

    async def page(self, tenant_id: str, query: AuditQuery) -> list[AuditEntry]:
        """Up to `query.limit` of the tenant's entries, newest first, before the position."""
        cursor = self.collection.find(query.filter(tenant_id))
        cursor = cursor.sort([("at", DESCENDING), ("entry_id", DESCENDING)]).limit(query.limit)
        return [entry_from_row(row) async for row in cursor]
