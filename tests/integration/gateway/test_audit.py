"""The audit log through the real gateway, memory service and broker: each audited action is
listed for the tenant's admin with the right key and ids, an expired memory too (the memory
service's sweeper's entry, merged in), never the content, reason or value the test used; pages
follow the cursor; other keys get a 403 and bad parameters a 422."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write
from tests.support.polling import until

CONTENT = "the vault combination is 9931-zebra"
EDITED = "the vault combination is 7720-okapi"
EXPIRING = "the courier arrives at the lilac gate"
REASON = "the old combination leaked-quokka"
VALUE = "+49 30 5550-marmot"
CURATOR_REASON = "called the carrier-wombat"
PROBLEM = "application/problem+json"


def entries(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    answer = client.get("/v1/audit", params={"limit": 200, **params})
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["entries"]
    return found


def one(found: list[dict[str, Any]], action: str, **target: str) -> dict[str, Any]:
    matching = [
        e
        for e in found
        if e["action"] == action and all(e["target"].get(k) == v for k, v in target.items())
    ]
    assert len(matching) == 1, (action, target, found)
    return matching[0]


def test_every_audited_action_is_listed_for_the_admin_with_ids_never_content(
    start_stack: Callable[..., MemoryStack],
) -> None:
    stack = start_stack(ENGRAM_MEMORY_EXPIRY_SWEEP_SECONDS="1")
    admin_key = stack.tenant("audit")
    with stack.client(admin_key) as admin:
        admin_id = admin_key.split("_")[1]
        agent = new_agent(admin)
        expiring = write(admin, agent, EXPIRING, ttl_seconds=2)
        memory = write(admin, agent, CONTENT)
        wait_status(admin, agent, memory, {"active"})
        edit = admin.patch(
            f"/v1/agents/{agent}/memories/{memory}", json={"content": EDITED, "reason": REASON}
        )
        assert edit.status_code == 202, edit.text
        newer = edit.json()["memory_id"]
        expired = until(
            lambda: entries(admin, action="memory.expired", target=expiring),
            "the sweeper's entry for the expired memory (before the export, which skips it)",
            timeout=60,
        )

        curator = admin.post("/v1/keys", json={"role": "curator", "name": "curator"}).json()
        with stack.client(curator["key"]) as cur:
            path = "/v1/knowledge/entities/carrier:c1/facts/phone"
            put = cur.put(path, json={"value": VALUE, "reason": CURATOR_REASON})
            assert put.status_code == 202, put.text
            gone = cur.request("DELETE", path, json={"reason": CURATOR_REASON})
            assert gone.status_code == 202, gone.text
            refused = cur.get("/v1/audit")
            assert refused.status_code == 403 and refused.headers["content-type"] == PROBLEM

        rules = {"rules": [{"type": "note", "max_count": 10}]}
        assert admin.put(f"/v1/agents/{agent}/retention", json=rules).status_code == 200
        exported = admin.get("/v1/export", params={"agent_id": agent})
        assert exported.status_code == 200, exported.text
        imported = admin.post(
            "/v1/import",
            content=exported.content,
            headers={"content-type": "application/x-ndjson"},
        )
        assert imported.status_code == 200, imported.text
        import_id = imported.json()["import_id"]

        plain = admin.post("/v1/keys", json={"role": "default"}).json()
        rotated = admin.post(f"/v1/keys/{plain['key_id']}:rotate").json()
        with stack.client(rotated["key"]) as default:
            refused = default.get("/v1/audit")
            assert refused.status_code == 403 and refused.headers["content-type"] == PROBLEM
        assert admin.delete(f"/v1/keys/{rotated['key_id']}").status_code == 200
        assert admin.delete(f"/v1/keys/{rotated['key_id']}").status_code == 200, "a retry"

        raw = admin.get("/v1/audit", params={"limit": 200})
        assert raw.status_code == 200
        for secret in (CONTENT, EDITED, EXPIRING, REASON, VALUE, CURATOR_REASON):
            assert secret.encode() not in raw.content, secret
        for key in (curator["key"], plain["key"], rotated["key"]):
            assert key.split("_", 2)[2].encode() not in raw.content

    found: list[dict[str, Any]] = raw.json()["entries"]
    by_admin = {"kind": "key", "key_id": admin_id, "role": "admin"}
    edited = one(found, "memory.edited", memory_id=memory)
    assert edited["actor"] == by_admin
    assert edited["target"] == {"agent_id": agent, "memory_id": memory, "new_memory_id": newer}
    assert edited["reason_sha256"] and len(edited["reason_sha256"]) == 64
    assert expired[0]["actor"] == {"kind": "system", "key_id": None, "role": "system"}
    assert expired[0]["target"] == {"agent_id": agent, "memory_id": expiring}
    by_curator = {"kind": "key", "key_id": curator["key_id"], "role": "curator"}
    for action in ("fact.asserted", "fact.withdrawn"):
        fact = one(found, action, entity_id="carrier:c1", attribute="phone")
        assert fact["actor"] == by_curator and fact["reason_sha256"]
    assert one(found, "retention.set", agent_id=agent)["counts"] == {"rules": 1}
    assert one(found, "export.started", agent_id=agent)["counts"]["agents"] == 1
    assert one(found, "import.started", import_id=import_id)["counts"]["agent"] == 1
    assert one(found, "import.finished", import_id=import_id)["actor"] == by_admin
    assert one(found, "key.created", key_id=curator["key_id"])["target"]["role"] == "curator"
    assert one(found, "key.created", key_id=plain["key_id"])["actor"] == by_admin
    assert (
        one(found, "key.rotated", key_id=plain["key_id"])["target"]["new_key_id"]
        == (rotated["key_id"])
    )
    one(found, "key.revoked", key_id=rotated["key_id"])
    assert [e["at"] for e in found] == sorted((e["at"] for e in found), reverse=True)

    with stack.client(admin_key) as admin:
        walked: list[str] = []
        cursor = None
        while True:
            params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
            page = admin.get("/v1/audit", params=params)
            assert page.status_code == 200, page.text
            walked += [e["entry_id"] for e in page.json()["entries"]]
            cursor = page.json()["next_cursor"]
            if cursor is None:
                break
        everything = [e["entry_id"] for e in entries(admin)]
        assert walked == everything and len(walked) >= len(found)

        for params in (
            {"action": "memory.deleted"},
            {"limit": "0"},
            {"limit": "201"},
            {"cursor": "not-a-cursor"},
            {"since": "2026-12-05T10:00:00"},
            {"since": "0001-01-01T00:00:00+05:00"},
            {"until": "yesterday"},
            {"actor": admin_id},
        ):
            bad = admin.get("/v1/audit", params=params)
            assert bad.status_code == 422, (params, bad.text)
            assert bad.headers["content-type"] == PROBLEM
            assert next(iter(params)) in bad.text
