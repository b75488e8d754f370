"""A tenant's admins issue, list, revoke and rotate its keys; the last admin key stays, a
revoked key is forgotten by this instance at once, and a key's use is written once a minute."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engram_gateway.domain.access import (
    ADMIN,
    OPS,
    LastUse,
    StoredKey,
    locks_out,
    role_of,
    roles_for,
    view_of,
)
from engram_gateway.domain.keys import IssuedKey, issue_key
from engram_gateway.domain.model import Caller
from engram_gateway.service.keys import KeyManagement, NewKey
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"
START = datetime(2026, 12, 1, tzinfo=UTC)


class Keys:
    """The `api_keys` rows in memory; `issue` plays the registry that inserts them."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.forgotten: list[str] = []
        self.touched: list[tuple[str, str, datetime]] = []
        self.fail_touch = False
        self.after_revoke: list[str] = []
        """Keys another request revokes right after this one's revocation (a race)."""

    async def add_key(
        self, tenant_id: str, roles: tuple[str, ...] = (), *, name: str | None = None
    ) -> IssuedKey:
        key = issue_key()
        self.rows[key.key_id] = {
            "_id": key.key_id,
            "tenant_id": tenant_id,
            "name": name,
            "secret_hash": key.secret_hash,
            "salt": key.salt,
            "roles": list(roles),
            "created_at": START + timedelta(seconds=len(self.rows)),
            "revoked": False,
        }
        return key

    def forget_key(self, key_id: str) -> None:
        self.forgotten.append(key_id)

    async def list(self, tenant_id: str) -> list[StoredKey]:
        mine = [r for r in self.rows.values() if r["tenant_id"] == tenant_id]
        return [_stored(r) for r in sorted(mine, key=lambda r: (r["created_at"], r["_id"]))]

    async def get(self, tenant_id: str, key_id: str) -> StoredKey | None:
        row = self.rows.get(key_id)
        return _stored(row) if row and row["tenant_id"] == tenant_id else None

    async def active_admins(self, tenant_id: str) -> set[str]:
        return {
            k
            for k, r in self.rows.items()
            if r["tenant_id"] == tenant_id and ADMIN in r["roles"] and not r["revoked"]
        }

    async def revoke(self, tenant_id: str, key_id: str, at: datetime) -> bool:
        row = self.rows.get(key_id)
        if not row or row["tenant_id"] != tenant_id or row["revoked"]:
            return False
        row.update(revoked=True, revoked_at=at)
        for other in self.after_revoke:
            self.rows[other].update(revoked=True, revoked_at=at)
        self.after_revoke = []
        return True

    async def restore(self, tenant_id: str, key_id: str, at: datetime) -> None:
        row = self.rows[key_id]
        if row["tenant_id"] == tenant_id and row.get("revoked_at") == at:
            row["revoked"] = False
            del row["revoked_at"]

    async def touch(self, tenant_id: str, key_id: str, at: datetime) -> None:
        if self.fail_touch:
            raise ConnectionError("database down")
        self.touched.append((tenant_id, key_id, at))


def _stored(row: dict[str, Any]) -> StoredKey:
    return StoredKey(
        key_id=row["_id"],
        tenant_id=row["tenant_id"],
        roles=tuple(row["roles"]),
        created_at=row["created_at"],
        name=row["name"],
        revoked=row["revoked"],
        revoked_at=row.get("revoked_at"),
    )


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def management(keys: Keys, clock: Clock | None = None) -> KeyManagement:
    return KeyManagement(keys, keys, now=lambda: START, monotonic=clock or Clock())


async def first_admin(keys: Keys) -> str:
    return (await keys.add_key(T, (ADMIN,))).key_id


async def test_a_created_key_is_listed_without_its_secret() -> None:
    keys = Keys()
    admin = await first_admin(keys)
    new = await management(keys).create(T, "default", "ci")
    assert new.plaintext.startswith(f"egk_{new.view.key_id}_")
    assert (new.view.role, new.view.name, new.view.prefix) == (
        "default",
        "ci",
        f"egk_{new.view.key_id}",
    )
    listed = await management(keys).list(T)
    assert [k.key_id for k in listed] == [admin, new.view.key_id]
    shown = str([k.model_dump() for k in listed])
    secret = new.plaintext.split("_", 2)[2]
    assert secret not in shown and keys.rows[new.view.key_id]["secret_hash"] not in shown


async def test_another_tenants_key_is_not_found() -> None:
    keys = Keys()
    await first_admin(keys)
    theirs = (await keys.add_key("tnt_b", (ADMIN,))).key_id
    for action in (management(keys).revoke, management(keys).rotate):
        with pytest.raises(Problem) as refused:
            await action(T, theirs)
        assert refused.value.status == 404
    assert not keys.rows[theirs]["revoked"]


async def test_a_revoked_key_is_marked_and_forgotten_by_this_instance() -> None:
    keys = Keys()
    await first_admin(keys)
    other = (await keys.add_key(T)).key_id
    view = await management(keys).revoke(T, other)
    assert view.revoked_at == START and keys.rows[other]["revoked"]
    assert keys.forgotten == [other]
    again = await management(keys).revoke(T, other)
    assert again.revoked_at == START


async def test_the_last_admin_key_cannot_be_revoked() -> None:
    keys = Keys()
    admin = await first_admin(keys)
    await keys.add_key(T)
    with pytest.raises(Problem) as refused:
        await management(keys).revoke(T, admin)
    assert (refused.value.status, refused.value.kind) == (409, "last-admin-key")
    assert not keys.rows[admin]["revoked"]


async def test_an_admin_key_goes_when_another_admin_key_stays() -> None:
    keys = Keys()
    admin = await first_admin(keys)
    await management(keys).create(T, "admin", None)
    await management(keys).revoke(T, admin)
    assert keys.rows[admin]["revoked"]


async def test_two_admins_revoked_at_once_leave_one_standing() -> None:
    keys = Keys()
    first = await first_admin(keys)
    second = await first_admin(keys)
    keys.after_revoke = [second]
    with pytest.raises(Problem) as refused:
        await management(keys).revoke(T, first)
    assert refused.value.status == 409
    assert not keys.rows[first]["revoked"]


async def test_rotation_issues_the_same_role_and_name_and_revokes_the_old_key() -> None:
    keys = Keys()
    admin = await first_admin(keys)
    keys.rows[admin]["name"] = "root"
    new = await management(keys).rotate(T, admin)
    assert (new.view.role, new.view.name) == ("admin", "root")
    assert keys.rows[admin]["revoked"] and not keys.rows[new.view.key_id]["revoked"]
    assert keys.forgotten == [admin]


async def test_a_rotation_whose_audit_entry_fails_leaves_the_old_key_live() -> None:
    keys = Keys()
    admin = await first_admin(keys)

    async def unaudited(new: NewKey) -> None:
        raise Problem(503, "audit-unavailable", "the action could not be audited; retry")

    with pytest.raises(Problem):
        await management(keys).rotate(T, admin, before_revoking=unaudited)
    assert not keys.rows[admin]["revoked"] and keys.forgotten == []
    seen: list[str] = []

    async def audited(new: NewKey) -> None:
        seen.append(new.view.key_id)

    new = await management(keys).rotate(T, admin, before_revoking=audited)
    assert seen == [new.view.key_id] and keys.rows[admin]["revoked"]


async def test_a_revoked_key_cannot_be_rotated() -> None:
    keys = Keys()
    await first_admin(keys)
    other = (await keys.add_key(T)).key_id
    await management(keys).revoke(T, other)
    with pytest.raises(Problem) as refused:
        await management(keys).rotate(T, other)
    assert (refused.value.status, refused.value.kind) == (409, "key-revoked")


async def test_a_keys_use_is_written_once_a_minute() -> None:
    keys, clock = Keys(), Clock()
    manager = management(keys, clock)
    caller = Caller(tenant_id=T, key_id="k1")
    for now in (0.0, 1.0, 59.9, 60.0, 61.0):
        clock.now = now
        await manager.note_use(caller)
    assert len(keys.touched) == 2
    await manager.note_use(Caller(tenant_id=T, key_id="k2"))
    assert [k for _, k, _ in keys.touched] == ["k1", "k1", "k2"]


async def test_a_failed_use_write_does_not_fail_the_request() -> None:
    keys = Keys()
    keys.fail_touch = True
    await management(keys).note_use(Caller(tenant_id=T, key_id="k1"))


def test_roles_issue_and_show() -> None:
    assert roles_for("default") == () and roles_for("admin") == (ADMIN,)
    assert role_of([]) == "default" and role_of([OPS]) == "ops"
    assert role_of([OPS, ADMIN]) == "admin"


def test_only_an_admin_keys_revocation_can_lock_out() -> None:
    assert locks_out([ADMIN], 0)
    assert not locks_out([ADMIN], 1)
    assert not locks_out([OPS], 0) and not locks_out([], 0)


def test_last_use_forgets_its_oldest_keys_beyond_its_size() -> None:
    last = LastUse(every=60, size=2)
    assert last.due("a", 0) and last.due("b", 0) and last.due("c", 0)
    assert last.due("a", 1) and not last.due("c", 1)


def test_a_view_shows_revocation_only_of_a_revoked_key() -> None:
    key = StoredKey("k", T, (), START, revoked=False, revoked_at=START)
    assert view_of(key).revoked_at is None
    assert view_of(replace(key, revoked=True)).revoked_at == START
