"""The DLQ as the dashboard sees it: read engram.dlq.v1, replay originals once, remember replays."""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import ValidationError
from pymongo.errors import DuplicateKeyError

from engram_events import Topics, topic_name
from engram_events.payloads.dlq import DeadLetter
from engram_gateway.domain.dead_letters import Letter

log = logging.getLogger(__name__)

REPLAYS = "dlq_replays"
READ_PER_PARTITION = 500
_DROPPED_HEADERS = frozenset({"traceparent", "tracestate"})


class Publisher(Protocol):
    """What replay needs from the broker."""

    async def publish(
        self,
        message: Any,
        topic: str,
        *,
        key: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any: ...


class DeadLetterBox:
    """Reads a tenant's dead letters and replays them to their original topics, once each."""

    def __init__(
        self,
        *,
        bootstrap: str,
        topic_prefix: str,
        db: Any,
        publisher: Publisher,
        security: Mapping[str, Any] | None = None,
    ) -> None:
        self.bootstrap = bootstrap
        self.security = dict(security or {})
        self.prefix = topic_prefix
        self.topic = topic_name(Topics.DLQ, topic_prefix)
        self.replays = db[REPLAYS]
        self.publisher = publisher
        self.allowed_topics = {topic_name(t, topic_prefix) for t in Topics if t is not Topics.DLQ}

    async def read(self, tenant_id: str) -> list[Letter]:
        """The tenant's most recent dead letters (newest first), marked when already replayed."""
        raw = await self._read_topic()
        letters = []
        for partition, offset, value in raw:
            try:
                letter = DeadLetter.model_validate_json(value)
            except ValidationError:
                continue
            if letter.tenant_id == tenant_id:
                letters.append(Letter(partition, offset, letter))
        keys = [self._key(tenant_id, item.letter_id) for item in letters]
        done = {
            doc["_id"]: doc.get("replayed_at")
            async for doc in self.replays.find({"_id": {"$in": keys}, "tenant_id": tenant_id})
        }
        marked = [
            Letter(i.partition, i.offset, i.letter, done.get(self._key(tenant_id, i.letter_id)))
            for i in letters
        ]
        return sorted(marked, key=lambda i: i.letter.failed_at, reverse=True)

    async def replay(self, tenant_id: str, letter_ids: set[str]) -> dict[str, str]:
        """Republish each chosen letter's original bytes and key; a letter replays only once."""
        results: dict[str, str] = {}
        for item in await self.read(tenant_id):
            if item.letter_id not in letter_ids:
                continue
            results[item.letter_id] = await self._replay_one(tenant_id, item)
        for missing in letter_ids - set(results):
            results[missing] = "not_found"
        return results

    async def _replay_one(self, tenant_id: str, item: Letter) -> str:
        letter = item.letter
        if letter.topic not in self.allowed_topics:
            return "refused_topic"
        key = self._key(tenant_id, item.letter_id)
        try:
            await self.replays.insert_one(
                {
                    "_id": key,
                    "tenant_id": tenant_id,
                    "consumer": letter.consumer,
                    "event_id": letter.event_id,
                    "topic": letter.topic,
                    "status": "replaying",
                    "replayed_at": datetime.now(UTC),
                }
            )
        except DuplicateKeyError:
            return "already_replayed"
        headers = {k: v for k, v in letter.headers.items() if k not in _DROPPED_HEADERS}
        await self.publisher.publish(
            base64.b64decode(letter.value_base64),
            letter.topic,
            key=letter.key.encode() if letter.key else None,
            headers=headers,
        )
        await self.replays.update_one(
            {"_id": key, "tenant_id": tenant_id}, {"$set": {"status": "replayed"}}
        )
        log.info(
            "dead letter replayed",
            extra={
                "letter_id": item.letter_id,
                "consumer": letter.consumer,
                "event_id": letter.event_id,
            },
        )
        return "replayed"

    def _key(self, tenant_id: str, letter_id: str) -> str:
        return f"{tenant_id}:{self.topic}:{letter_id}"

    async def _read_topic(self) -> list[tuple[int, int, bytes]]:
        """The last READ_PER_PARTITION messages of every DLQ partition (no consumer group)."""
        from aiokafka import AIOKafkaConsumer, TopicPartition
        from aiokafka.admin import AIOKafkaAdminClient

        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, enable_auto_commit=False, **self.security
        )
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap, **self.security)
        await consumer.start()
        await admin.start()
        out: list[tuple[int, int, bytes]] = []
        try:
            described = await admin.describe_topics([self.topic])
            partitions = [
                TopicPartition(self.topic, part["partition"])
                for topic in described
                if not topic.get("error_code")
                for part in topic["partitions"]
            ]
            if not partitions:
                return out
            consumer.assign(partitions)
            ends = await consumer.end_offsets(partitions)
            starts = await consumer.beginning_offsets(partitions)
            for tp in partitions:
                consumer.seek(tp, max(starts[tp], ends[tp] - READ_PER_PARTITION))
            remaining = {tp for tp in partitions if ends[tp] > starts[tp]}
            while remaining:
                batch = await consumer.getmany(*remaining, timeout_ms=2000)
                if not batch:
                    break
                for tp, records in batch.items():
                    out.extend((tp.partition, r.offset, r.value) for r in records if r.value)
                    if await consumer.position(tp) >= ends[tp]:
                        remaining.discard(tp)
        finally:
            await consumer.stop()
            await admin.close()
        return out
