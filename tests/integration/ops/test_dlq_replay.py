"""A message that failed while its dependency was down is replayed from /ops and applied once.

The consumer is the platform's real consumer runtime (retries, DLQ, dedup) running in this
process over the real broker and database; its handler needs a dependency the test takes
down and brings back, the way a downstream HTTP service or model server goes away.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from aiokafka import AIOKafkaProducer

from engram_events import Envelope, encode, new_event
from engram_events.catalog import DOCUMENT_SUBMITTED
from engram_events.payloads.documents import DocumentSubmitted
from engram_platform.logs import configure_logging
from engram_platform.runtime import ConnectedRuntime, Runtime
from engram_platform.settings import ServiceSettings
from engram_platform.topics import ensure_topics
from tests.conftest import Infra
from tests.integration.ops.support import create_ops_tenant, tenant_of
from tests.support.polling import until_async
from tests.support.services import ServiceProcess

CONSUMER = "replaycheck"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


class Dependency:
    """Something the handler needs: down at first, back after the fix."""

    def __init__(self) -> None:
        self.up = False
        self.applied: list[str] = []

    async def handle(self, event: Envelope[DocumentSubmitted]) -> list[Envelope[Any]]:
        if not self.up:
            raise ConnectionError("dependency unavailable")
        self.applied.append(str(event.event_id))
        return []


@asynccontextmanager
async def running_consumer(
    infra: Infra, names: dict[str, str], dependency: Dependency
) -> AsyncIterator[ConnectedRuntime]:
    """The consumer runtime with two attempts, subscribed to the documents topic."""
    settings = ServiceSettings(
        kafka_bootstrap_servers=infra.bootstrap,
        mongodb_uri=infra.mongodb_uri,
        topic_prefix=names["ENGRAM_TOPIC_PREFIX"],
        database_prefix=names["ENGRAM_DATABASE_PREFIX"],
        max_attempts=2,
        retry_base_seconds=0.05,
        retry_max_seconds=0.1,
        metrics_enabled=False,
    )
    runtime = Runtime.build(CONSUMER, settings, install_global=False)
    await ensure_topics(infra.bootstrap, prefix=settings.topic_prefix)
    async with runtime.connected() as connected:
        connected.consumer.on(DOCUMENT_SUBMITTED, dependency.handle)
        connected.consumer.subscribe()
        await connected.broker.start()
        connected.start_relay()
        try:
            yield connected
        finally:
            await connected.broker.stop()


def _submitted(tenant_id: str) -> Envelope[DocumentSubmitted]:
    content = b"id\n1\n"
    sha = hashlib.sha256(content).hexdigest()
    payload = DocumentSubmitted(
        document_id="doc_replay",
        version=sha[:16],
        source="gateway",
        source_item_id="a.csv",
        name="a.csv",
        mime="text/csv",
        content_sha256=sha,
        size_bytes=len(content),
        content_base64=base64.b64encode(content).decode(),
    )
    return new_event(DOCUMENT_SUBMITTED, payload, tenant_id=tenant_id)


async def _produce_traced(infra: Infra, names: dict[str, str], event: Envelope[Any]) -> None:
    """Publish the event with a W3C traceparent, as an upstream service would."""
    producer = AIOKafkaProducer(bootstrap_servers=infra.bootstrap, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(
            f"{names['ENGRAM_TOPIC_PREFIX']}engram.documents.v1",
            encode(event),
            key=b"doc_replay",
            headers=[("traceparent", TRACEPARENT.encode())],
        )
    finally:
        await producer.stop()


async def test_a_dead_letter_replayed_after_the_fix_is_applied_once(
    service: Callable[..., ServiceProcess], infra: Infra, names: dict[str, str]
) -> None:
    gateway = service("gateway")
    key = create_ops_tenant(gateway.env)
    tenant_id = tenant_of(infra, names, key)
    event = _submitted(tenant_id)
    dependency = Dependency()
    captured = io.StringIO()
    handler = configure_logging(CONSUMER, "INFO", stream=captured)
    try:
        async with (
            running_consumer(infra, names, dependency),
            httpx.AsyncClient(
                base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
            ) as client,
        ):

            async def letters() -> list[dict[str, Any]]:
                response = await client.get("/ops/dlq")
                assert response.status_code == 200, response.text
                return [x for x in response.json() if x["consumer"] == CONSUMER]

            await _produce_traced(infra, names, event)
            [letter] = await until_async(letters, "the dead letter in the DLQ view")
            assert letter["error_type"] == "retries_exhausted:ConnectionError"
            assert letter["event_id"] == str(event.event_id) and letter["attempts"] == 2
            page = await client.get("/ops")
            assert letter["letter_id"] in page.text and "retries_exhausted" in page.text

            dependency.up = True
            replay = await client.post(
                "/ops/dlq/replay",
                data={"letter_id": letter["letter_id"]},
                headers={"Accept": "application/json"},
            )
            assert replay.json() == {"results": {letter["letter_id"]: "replayed"}}
            again = await client.post(
                "/ops/dlq/replay",
                data={"letter_id": letter["letter_id"]},
                headers={"Accept": "application/json"},
            )
            assert again.json() == {"results": {letter["letter_id"]: "already_replayed"}}
            everything = await client.post(
                "/ops/dlq/replay",
                data={"consumer": CONSUMER},
                headers={"Accept": "application/json"},
            )
            assert everything.json() == {"results": {}}

            async def applied() -> list[str]:
                return dependency.applied

            assert await until_async(applied, "the replayed event to be applied")
            marker = _submitted(tenant_id)
            await _produce_traced(infra, names, marker)
            await until_async(
                applied,
                "a later event on the same key to be applied (the consumer is past any duplicate)",
                ready=lambda done: str(marker.event_id) in done,
            )
            assert dependency.applied == [str(event.event_id), str(marker.event_id)], (
                "applied exactly once"
            )
            [after] = await letters()
            assert after["replayed_at"] is not None, "no new dead letter, the old one is marked"
    finally:
        logging.getLogger().removeHandler(handler)
    failures = [
        json.loads(line)
        for line in captured.getvalue().splitlines()
        if '"handler attempt failed"' in line
    ]
    assert failures and all(line["trace_id"] == TRACE_ID for line in failures), (
        "the consumer's log lines carry the trace id the message arrived with"
    )
