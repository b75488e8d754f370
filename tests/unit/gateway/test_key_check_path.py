"""An unknown key id costs the same hashing and comparison as a wrong secret, so how long a 401
takes does not tell whether a key id exists."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engram_gateway.adapters.registry import API_KEYS, Registry
from engram_gateway.domain.keys import issue_key, verify

pytestmark = pytest.mark.unit


class Keys:
    """`find_one` by `_id` over a few stored key rows."""

    def __init__(self, *rows: dict[str, Any]) -> None:
        self.rows = {row["_id"]: row for row in rows}
        self.reads = 0

    async def find_one(self, query: dict[str, Any]) -> dict[str, Any] | None:
        self.reads += 1
        return self.rows.get(query["_id"])


class CountingCheck:
    """The real check, recording each secret it hashed and what it answered."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []

    def __call__(self, secret: str, salt: str, expected_hash: str) -> bool:
        answer = verify(secret, salt, expected_hash)
        self.calls.append((secret, answer))
        return answer


def stored(revoked: bool = False) -> tuple[str, dict[str, Any]]:
    key = issue_key()
    row = {
        "_id": key.key_id,
        "tenant_id": "tnt_a",
        "secret_hash": key.secret_hash,
        "salt": key.salt,
        "roles": [],
        "created_at": datetime.now(UTC),
        "revoked": revoked,
    }
    return key.plaintext, row


def wrong_secret(plaintext: str) -> tuple[str, str]:
    prefix, key_id, _ = plaintext.split("_", 2)
    secret = "x" * 43
    return f"{prefix}_{key_id}_{secret}", secret


@pytest.mark.parametrize("cache_seconds", [0.0, 60.0])
async def test_unknown_revoked_and_wrong_keys_all_take_the_same_check(cache_seconds: float) -> None:
    live, live_row = stored()
    revoked, revoked_row = stored(revoked=True)
    check = CountingCheck()
    registry = Registry(
        {API_KEYS: Keys(live_row, revoked_row)}, cache_seconds=cache_seconds, check=check
    )
    unknown = f"egk_{'f' * 16}_{'y' * 43}"
    presented = [wrong_secret(live)[0], revoked, unknown]

    for key in presented:
        assert await registry.authenticate(key) is None

    assert [secret for secret, _ in check.calls] == [key.split("_", 2)[2] for key in presented]
    assert [answer for _, answer in check.calls] == [False, False, False]


async def test_the_right_key_still_passes_with_one_check() -> None:
    live, row = stored()
    check = CountingCheck()
    registry = Registry({API_KEYS: Keys(row)}, check=check)
    caller = await registry.authenticate(live)
    assert caller is not None and caller.tenant_id == "tnt_a"
    assert [answer for _, answer in check.calls] == [True]


async def test_a_wrong_secret_reads_the_store_like_an_unknown_id_even_for_a_remembered_key() -> (
    None
):
    live, row = stored()
    keys = Keys(row)
    registry = Registry({API_KEYS: keys}, cache_seconds=60.0)
    assert await registry.authenticate(live) is not None
    assert await registry.authenticate(live) is not None
    assert keys.reads == 1, "a verified key is answered from memory"

    assert await registry.authenticate(wrong_secret(live)[0]) is None
    assert await registry.authenticate(f"egk_{'f' * 16}_{'y' * 43}") is None
    assert keys.reads == 3, "a wrong secret and an unknown id each take one store read"
