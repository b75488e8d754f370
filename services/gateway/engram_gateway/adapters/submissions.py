"""What the gateway accepted, so a status URL answers 'pending' before the owner has it."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pymongo import ReturnDocument, UpdateOne
from pymongo.errors import BulkWriteError, DuplicateKeyError

from engram_gateway.domain.group_commit import GroupCommit
from engram_gateway.domain.submissions import Submission
from engram_platform.mongo import insert_new

SUBMISSIONS = "submissions"


@dataclass(frozen=True)
class _Write:
    """One accepted write waiting for its trip."""

    tenant_id: str
    kind: str
    item_id: str
    fields: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.tenant_id}:{self.kind}:{self.item_id}"


class Submissions:
    """Accepted writes per tenant, keyed `tenant:kind:id`."""

    def __init__(self, db: Any) -> None:
        self.collection = db[SUBMISSIONS]
        self._together: GroupCommit[_Write, Submission | None] = GroupCommit(self._trip)

    async def record(
        self, tenant_id: str, kind: str, item_id: str, **fields: Any
    ) -> Submission | None:
        """Remember an accepted write (idempotent on its id); the noted version it replaced, or
        None when the id is new (so the quotas count it once).

        Writes without a version (memories, conversations) that arrive while another trip is on
        its way go together in the next, one bulk write (`GroupCommit`); for those the answer
        is None when the id is new, only its kind and id when it was there (and not given
        back), and the whole row otherwise, as for a versioned write (a document's).
        """
        if "version" in fields:
            return await self._alone(tenant_id, kind, item_id, fields)
        return await self._together.submit(_Write(tenant_id, kind, item_id, fields))

    async def _alone(
        self, tenant_id: str, kind: str, item_id: str, fields: dict[str, Any]
    ) -> Submission | None:
        """One write, answering the whole row it replaced.

        Two requests for one id (the same document name uploaded twice at once) race to insert
        it; the loser's upsert fails on the duplicate key and is retried as the update it now is.
        """
        key, update = _upsert(tenant_id, kind, item_id, fields, datetime.now(UTC))
        try:
            return await self._replace(key, update)
        except DuplicateKeyError:
            return await self._replace(key, update)

    async def _trip(self, writes: Sequence[_Write]) -> list[Submission | None]:
        """Writes in one unordered bulk that only inserts new ids or updates rows still held;
        a write it did not take (a row given back, a lost insert race) goes alone after it.

        Which writes it took is told by the reply, or, when the local server's reply to a bulk
        with a failed write lacks `nModified` (pymongo raises a KeyError), by reading the rows
        back: each write marks its row with the trip's token, and a row it inserted also with
        `first_trip`."""
        now, token = datetime.now(UTC), uuid.uuid4().hex[:16]
        ops = []
        for w in writes:
            key, update = _upsert(w.tenant_id, w.kind, w.item_id, w.fields, now)
            update["$set"]["trip"] = token
            update["$setOnInsert"] = {"first_trip": token}
            del update["$unset"]
            ops.append(UpdateOne({**key, "released_at": {"$exists": False}}, update, upsert=True))
        try:
            result = await self.collection.bulk_write(ops, ordered=False)
            new, untaken = set(result.upserted_ids), set()
        except BulkWriteError as failed:
            new = {u["index"] for u in failed.details.get("upserted", [])}
            untaken = {e["index"] for e in failed.details.get("writeErrors", [])}
        except KeyError:
            new, untaken = await self._read_back(writes, token)
        answers: list[Submission | None] = []
        for index, w in enumerate(writes):
            if index in untaken:
                answers.append(await self._alone(w.tenant_id, w.kind, w.item_id, w.fields))
            else:
                answers.append(None if index in new else Submission(w.kind, w.item_id))
        return answers

    async def _read_back(self, writes: Sequence[_Write], token: str) -> tuple[set[int], set[int]]:
        """Which of a trip's writes inserted their row (the first write of an id, when a trip
        holds it twice), and which it did not take."""
        rows = {
            row["_id"]: row
            async for row in self.collection.find(
                {"_id": {"$in": [w.key for w in writes]}}, {"trip": 1, "first_trip": 1}
            )
        }
        new, untaken, inserted = set(), set(), set()
        for index, w in enumerate(writes):
            row = rows.get(w.key, {})
            if row.get("trip") != token:
                untaken.add(index)
            elif row.get("first_trip") == token and w.key not in inserted:
                inserted.add(w.key)
                new.add(index)
        return new, untaken

    async def _replace(self, key: dict[str, Any], update: dict[str, Any]) -> Submission | None:
        before = await self.collection.find_one_and_update(
            key,
            update,
            upsert=True,
            return_document=ReturnDocument.BEFORE,
        )
        return _submission(before) if before else None

    async def record_many(
        self, tenant_id: str, kind: str, items: list[tuple[str, dict[str, Any]]]
    ) -> int:
        """Remember many accepted writes (idempotent on their ids); how many of the ids are new.

        A batch's ids are new but for retries, so the rows go in one unordered insert; the ids
        already held are then updated in one bulk of upserts. (An upsert per row cost the local
        server a transaction each: half its write time under a bulk load.) When one of those
        lost an insert race to another request, they are written one by one as `record` does;
        the local server's answer to that bulk write lacks `nModified`, which pymongo reads as
        a KeyError rather than a BulkWriteError.
        """
        now = datetime.now(UTC)
        rows = [
            _inserted(*_upsert(tenant_id, kind, item_id, fields, now)) for item_id, fields in items
        ]
        held = await insert_new(self.collection, rows)
        again = [items[index] for index in sorted(held)]
        if not again:
            return len(items)
        updates = [
            UpdateOne(*_upsert(tenant_id, kind, item_id, fields, now), upsert=True)
            for item_id, fields in again
        ]
        try:
            result = await self.collection.bulk_write(updates, ordered=False)
            return len(items) - len(again) + int(result.upserted_count)
        except (BulkWriteError, KeyError):
            previous = [await self._alone(tenant_id, kind, i, f) for i, f in again]
            return len(items) - len(again) + sum(p is None for p in previous)

    async def release(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        """Mark an accepted write deleted, once: the write as it was when this call released
        it, None when it is unknown or was released already."""
        before = await self.collection.find_one_and_update(
            {
                "_id": f"{tenant_id}:{kind}:{item_id}",
                "tenant_id": tenant_id,
                "released_at": {"$exists": False},
            },
            {"$set": {"released_at": datetime.now(UTC)}},
            return_document=ReturnDocument.BEFORE,
        )
        return _submission(before) if before else None

    async def get(self, tenant_id: str, kind: str, item_id: str) -> Submission | None:
        """The accepted write, only within the caller's tenant."""
        doc = await self.collection.find_one(
            {"_id": f"{tenant_id}:{kind}:{item_id}", "tenant_id": tenant_id}
        )
        return _submission(doc) if doc else None

    async def held(
        self, tenant_id: str, items: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Submission]:
        """The accepted writes among these (kind, id) pairs, in one `_id $in` lookup."""
        keys = list(dict.fromkeys(f"{tenant_id}:{kind}:{item_id}" for kind, item_id in items))
        if not keys:
            return {}
        cursor = self.collection.find({"_id": {"$in": keys}, "tenant_id": tenant_id})
        found: dict[tuple[str, str], Submission] = {}
        async for row in cursor:
            submission = _submission(row)
            found[(submission.kind, submission.item_id)] = submission
        return found


def _upsert(
    tenant_id: str, kind: str, item_id: str, fields: dict[str, Any], now: datetime
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The filter and update that keep one accepted write: `_id` is `tenant:kind:id`."""
    return (
        {"_id": f"{tenant_id}:{kind}:{item_id}", "tenant_id": tenant_id},
        {
            "$set": {**fields, "tenant_id": tenant_id, "kind": kind, "updated_at": now},
            "$unset": {"released_at": ""},
        },
    )


def _inserted(key: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """The row an upsert of this key would create, to write in a plain insert."""
    return {"_id": key["_id"], **update["$set"]}


def _submission(row: dict[str, Any]) -> Submission:
    """A stored row as the use cases read it; its kind and id are in its `_id`
    (`tenant:kind:id`, the id may hold colons)."""
    kind, item_id = str(row["_id"])[len(row["tenant_id"]) + 1 :].split(":", 1)
    version = row.get("version")
    return Submission(
        kind=kind,
        item_id=item_id,
        agent_id=row.get("agent_id"),
        version=None if version is None else str(version),
        size_bytes=int(row.get("size_bytes") or 0),
        released_at=row.get("released_at"),
    )
