"""`engram dlq list | replay` and the client's DLQ methods over the gateway's ops API."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from engram_client import EngramClient, Forbidden
from engram_events.payloads.dlq import DeadLetter
from tests.conftest import Infra
from tests.integration.client.conftest import engram
from tests.integration.ops.support import tenant_of
from tests.support.kafka import produce
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant


async def test_dead_letters_are_listed_and_replayed_once(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    gateway = service("gateway")
    created = engram("tenant", "create", "ops-team", "--ops", env=gateway.env)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    prefix = names["ENGRAM_TOPIC_PREFIX"]
    letter = DeadLetter(
        consumer="ingest",
        topic=f"{prefix}engram.documents.v1",
        partition=0,
        offset=7,
        key="doc_1",
        event_id="00000000-0000-4000-8000-000000000001",
        event_type="document.submitted",
        tenant_id=tenant_of(infra, names, key),
        error_type="retries_exhausted:ConnectionError",
        error="dependency unavailable",
        attempts=3,
        value_base64=base64.b64encode(b'{"replayed": true}').decode(),
        failed_at=datetime.now(UTC),
    )
    await produce(infra.bootstrap, f"{prefix}engram.dlq.v1", [letter.model_dump_json().encode()])
    env = {"ENGRAM_URL": gateway.url, "ENGRAM_API_KEY": key}

    listed = engram("dlq", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    [shown] = json.loads(listed.stdout)
    assert shown["consumer"] == "ingest" and shown["replayed_at"] is None
    assert "value_base64" not in shown, "the failed payload is never shown"

    replayed = engram("dlq", "replay", shown["letter_id"], env=env)
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.split() == [shown["letter_id"], "replayed"]
    with EngramClient(gateway.url, key) as client:
        assert client.replay_dead_letters(letter_id=shown["letter_id"]) == {
            shown["letter_id"]: "already_replayed"
        }
        assert client.replay_dead_letters(consumer="ingest") == {}
        [after] = client.list_dead_letters()
    assert after.replayed_at is not None
    assert engram("dlq", "replay", "0-999999", env=env).returncode == 3
    pending = engram("dlq", "list", "--pending", env=env)
    assert pending.returncode == 0 and pending.stdout.strip() == ""

    plain_key = create_tenant(gateway.env, "no-ops")
    with EngramClient(gateway.url, plain_key) as client, pytest.raises(Forbidden):
        client.list_dead_letters()
    refused = engram("dlq", "list", env={**env, "ENGRAM_API_KEY": plain_key})
    assert refused.returncode == 1 and "ops role" in refused.stderr
