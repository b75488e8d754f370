"""The audit log's pure parts: ids, times, cursors, the selection and the merge of two logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from engram_platform.audit import (
    SYSTEM_ACTOR,
    Actor,
    AuditEntry,
    AuditPageRequest,
    AuditQuery,
    BadCursor,
    Position,
    audit_time,
    decode_cursor,
    encode_cursor,
    entry_from_row,
    entry_id_for,
    newest_first,
    sha256_of,
)

pytestmark = pytest.mark.unit

AT = datetime(2026, 12, 5, 12, 0, 0, 123456, tzinfo=UTC)
KEY = Actor(kind="key", key_id="k1", role="admin")


def entry(n: int, at: datetime = AT, action: str = "key.created") -> AuditEntry:
    return AuditEntry.model_validate(
        {
            "entry_id": f"aud_{n:04d}",
            "tenant_id": "t",
            "at": audit_time(at),
            "actor": KEY,
            "action": action,
            "target": {"key_id": f"key{n}"},
        }
    )


def test_an_entry_id_is_the_same_for_the_same_action_on_the_same_ids() -> None:
    assert entry_id_for("t", "key.revoked", "k1") == entry_id_for("t", "key.revoked", "k1")
    assert entry_id_for("t", "key.revoked", "k1") != entry_id_for("u", "key.revoked", "k1")
    assert entry_id_for("t", "key.revoked", "k1") != entry_id_for("t", "key.rotated", "k1")
    assert entry_id_for("t", "a", "b:c").startswith("aud_")


def test_times_are_kept_to_the_millisecond_in_utc_and_a_naive_one_is_utc() -> None:
    assert audit_time(AT).microsecond == 123000
    assert audit_time(AT.replace(tzinfo=None)) == audit_time(AT)


def test_a_reason_is_kept_only_as_its_hash() -> None:
    assert sha256_of(None) is None
    assert sha256_of("because") == sha256_of("because") != sha256_of("Because")
    assert len(sha256_of("because") or "") == 64


def test_a_row_reads_back_as_the_entry_and_names_every_target_id() -> None:
    one = entry(1).model_copy(update={"target": {"agent_id": "a1", "memory_id": "m1"}})
    row = one.row()
    assert row["_id"] == "t:aud_0001" and row["target_ids"] == ["a1", "m1"]
    naive = {**row, "at": row["at"].replace(tzinfo=None)}
    assert entry_from_row(naive) == one
    assert "tenant_id" not in one.shown() and one.shown()["at"].startswith("2026-12-05T12:00")


def test_a_cursor_names_the_last_entry_and_refuses_anything_else() -> None:
    one = entry(7)
    assert decode_cursor(encode_cursor(one)) == Position(one.at, one.entry_id)
    far = Position(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))), "aud_1")
    naive = Position(AT.replace(tzinfo=None), "aud_1")
    crafted = [encode_cursor(one.model_copy(update={"at": p.at})) for p in (far, naive)]
    for bad in ("x", "eyJhIjoxfQ", "WzFd", encode_cursor(one)[:-3], *crafted):
        with pytest.raises(BadCursor):
            decode_cursor(bad)


def test_the_filter_names_the_tenant_the_window_the_target_and_the_position() -> None:
    since, until = AT - timedelta(hours=1), AT
    query = AuditQuery(
        limit=5,
        actions=("key.created",),
        since=since,
        until=until,
        target="k1",
        before=Position(audit_time(AT), "aud_9"),
    )
    found = query.filter("t")
    assert found["tenant_id"] == "t" and found["action"] == {"$in": ["key.created"]}
    assert found["at"] == {"$gte": audit_time(since), "$lt": audit_time(until)}
    assert found["target_ids"] == "k1"
    assert found["$or"][1] == {"at": audit_time(AT), "entry_id": {"$lt": "aud_9"}}
    assert AuditQuery(limit=1).filter("t") == {"tenant_id": "t"}


def test_a_query_knows_which_logs_may_hold_its_actions() -> None:
    assert AuditQuery(limit=1).wants({"memory.expired"})
    assert AuditQuery(limit=1, actions=("memory.expired",)).wants({"memory.expired"})
    assert not AuditQuery(limit=1, actions=("key.created",)).wants({"memory.expired"})


def test_a_query_travels_to_the_memory_service_and_back_unchanged() -> None:
    query = AuditQuery(
        limit=3,
        actions=("memory.expired",),
        since=audit_time(AT),
        target="m1",
        before=Position(audit_time(AT), "aud_1"),
    )
    sent = AuditPageRequest.of(query).model_dump(mode="json")
    assert AuditPageRequest.model_validate(sent).query() == query


def test_two_logs_merge_newest_first_with_ties_broken_by_id() -> None:
    gateway = [entry(3, AT), entry(1, AT - timedelta(seconds=2))]
    memory = [
        entry(2, AT, "memory.expired").model_copy(update={"actor": SYSTEM_ACTOR}),
        entry(0, AT - timedelta(seconds=1), "memory.expired"),
    ]
    merged = newest_first([gateway, memory], 3)
    assert [e.entry_id for e in merged] == ["aud_0003", "aud_0002", "aud_0000"]
