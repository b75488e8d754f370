"""Key roles and the rules of a key's life: which roles a tenant may issue, when a revocation
would lock a tenant out, and when a key's last use is worth a database write (pure)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

ADMIN = "admin"
"""Manages the tenant's keys (`/v1/keys`) and record types (`PUT`/`DELETE /v1/schema/types`),
on top of the data API every key may call."""
CURATOR = "curator"
"""Asserts and withdraws facts (`/v1/knowledge/entities/{id}/facts/{attribute}`); admins may too."""
OPS = "ops"
"""Sees the ops dashboard; issued only by the operator's CLI, never through the API."""
DEFAULT = "default"
"""The data API only: a key with no role."""

IssuableRole = Literal["default", "admin", "curator"]
"""What an admin key may issue through `POST /v1/keys` (the `ops` role reaches every tenant's
dashboard data, so only the operator grants it)."""

LAST_USED_EVERY_SECONDS = 60.0
"""A key's `last_used_at` is written at most once a minute per key and gateway instance."""


def roles_for(role: IssuableRole) -> tuple[str, ...]:
    """The stored roles of an issued role."""
    return () if role == DEFAULT else (role,)


def role_of(roles: Iterable[str]) -> str:
    """The one role a key shows: admin over ops over curator over default."""
    held = set(roles)
    for role in (ADMIN, OPS, CURATOR):
        if role in held:
            return role
    return DEFAULT


def may_curate(roles: Iterable[str]) -> bool:
    """Whether a key may edit facts: a curator's or an admin's."""
    return bool({CURATOR, ADMIN} & set(roles))


def may_declare_types(roles: Iterable[str]) -> bool:
    """Whether a key may change the tenant's record types: an admin's only, since a type decides
    how every later document is keyed and checked (a curator edits facts, not their shape)."""
    return ADMIN in set(roles)


def locks_out(roles: Iterable[str], other_active_admins: int) -> bool:
    """Whether revoking a key with these roles would leave its tenant with no admin key."""
    return ADMIN in set(roles) and other_active_admins <= 0


class LastUse:
    """Which key uses to write down: the first, then one per key every `every` seconds."""

    def __init__(self, every: float = LAST_USED_EVERY_SECONDS, size: int = 100_000) -> None:
        self.every = every
        self.size = size
        self._written: OrderedDict[str, float] = OrderedDict()

    def due(self, key_id: str, now: float) -> bool:
        """True (and noted) when this use should be written; `now` is a monotonic reading."""
        last = self._written.get(key_id)
        if last is not None and now - last < self.every:
            return False
        self._written[key_id] = now
        self._written.move_to_end(key_id)
        while len(self._written) > self.size:
            self._written.popitem(last=False)
        return True


class KeyView(BaseModel):
    """What a tenant's admins see of a key: never its secret or hash."""

    key_id: str
    prefix: str = Field(description="how the key's plaintext starts: `egk_<key_id>`")
    name: str | None = None
    role: str
    created_at: datetime
    last_used_at: datetime | None = Field(
        default=None, description="the last authenticated `/v1` request, to within a minute"
    )
    revoked_at: datetime | None = None


@dataclass(frozen=True)
class StoredKey:
    """A key as stored, without its secret: what its lifecycle reads."""

    key_id: str
    tenant_id: str
    roles: tuple[str, ...]
    created_at: datetime
    name: str | None = None
    revoked: bool = False
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


def view_of(key: StoredKey) -> KeyView:
    """A stored key as its admins see it."""
    return KeyView(
        key_id=key.key_id,
        prefix=f"egk_{key.key_id}",
        name=key.name,
        role=role_of(key.roles),
        created_at=key.created_at,
        last_used_at=key.last_used_at,
        revoked_at=key.revoked_at if key.revoked else None,
    )
