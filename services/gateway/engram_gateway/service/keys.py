"""A tenant's key lifecycle: issue, list, revoke and rotate, never leaving the tenant without an
admin key; and a key's last use, written down at most once a minute."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from engram_gateway.domain.access import (
    IssuableRole,
    KeyView,
    LastUse,
    StoredKey,
    locks_out,
    roles_for,
    view_of,
)
from engram_gateway.domain.model import Caller
from engram_gateway.ports import KeyIssuer, KeyRows
from engram_platform.problems import Problem

log = logging.getLogger(__name__)


def _now_ms() -> datetime:
    """Now, to the millisecond the database keeps (so a stored time compares equal)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@dataclass(frozen=True)
class NewKey:
    """A key just issued: its plaintext (shown once) and what its admins will see of it."""

    plaintext: str
    view: KeyView


class KeyManagement:
    """The use cases behind `/v1/keys`, for keys of the caller's tenant only."""

    def __init__(
        self,
        keys: KeyRows,
        issuer: KeyIssuer,
        *,
        now: Callable[[], datetime] = _now_ms,
        monotonic: Callable[[], float] = time.monotonic,
        last_use: LastUse | None = None,
    ) -> None:
        self.keys = keys
        self.issuer = issuer
        self.now = now
        self.monotonic = monotonic
        self.last_use = last_use or LastUse()

    async def create(self, tenant_id: str, role: IssuableRole, name: str | None) -> NewKey:
        """Issue a key with the role; its plaintext is in the answer only."""
        return await self._issue(tenant_id, roles_for(role), name)

    async def list(self, tenant_id: str) -> list[KeyView]:
        """Every key of the tenant, revoked ones too, oldest first."""
        return [view_of(key) for key in await self.keys.list(tenant_id)]

    async def revoke(self, tenant_id: str, key_id: str) -> KeyView:
        """Revoke a key (again: unchanged); 409 when it is the tenant's last admin key."""
        key = await self._found(tenant_id, key_id)
        if key.revoked:
            return view_of(key)
        roles = key.roles
        if locks_out(roles, len(await self.keys.active_admins(tenant_id) - {key_id})):
            raise _last_admin()
        at = self.now()
        if await self.keys.revoke(tenant_id, key_id, at):
            self.issuer.forget_key(key_id)
            if locks_out(roles, len(await self.keys.active_admins(tenant_id))):
                await self.keys.restore(tenant_id, key_id, at)
                raise _last_admin()
        return view_of(await self._found(tenant_id, key_id))

    async def rotate(
        self,
        tenant_id: str,
        key_id: str,
        *,
        before_revoking: Callable[[NewKey], Awaitable[object]] | None = None,
    ) -> NewKey:
        """Issue a replacement with the same role and name, then revoke the old key at once;
        `before_revoking` (the audit entry) runs between, so when it fails the old key stays
        live and a retry rotates it again (the replacement, never shown, stays unused)."""
        key = await self._found(tenant_id, key_id)
        if key.revoked:
            raise Problem(409, "key-revoked", "a revoked key cannot be rotated; create a new one")
        issued = await self._issue(tenant_id, key.roles, key.name)
        if before_revoking is not None:
            await before_revoking(issued)
        await self.keys.revoke(tenant_id, key_id, self.now())
        self.issuer.forget_key(key_id)
        return issued

    async def note_use(self, caller: Caller) -> None:
        """Write down a key's use when a minute has passed since this instance last did; a
        failed write never fails the request."""
        if not self.last_use.due(caller.key_id, self.monotonic()):
            return
        try:
            await self.keys.touch(caller.tenant_id, caller.key_id, self.now())
        except Exception:
            log.warning("last use not noted", extra={"key_id": caller.key_id}, exc_info=True)

    async def _issue(self, tenant_id: str, roles: tuple[str, ...], name: str | None) -> NewKey:
        issued = await self.issuer.add_key(tenant_id, roles, name=name)
        return NewKey(issued.plaintext, view_of(await self._found(tenant_id, issued.key_id)))

    async def _found(self, tenant_id: str, key_id: str) -> StoredKey:
        key = await self.keys.get(tenant_id, key_id)
        if key is None:
            raise Problem(404, detail="no such key")
        return key


def _last_admin() -> Problem:
    return Problem(
        409, "last-admin-key", "this is the tenant's last admin key; create another admin key first"
    )
