"""Create the contract's topics (records compacted) so services never depend on auto-creation."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from engram_events import ALL_TOPICS, COMPACTED_TOPICS, topic_name
from engram_platform.sending import MAX_MESSAGE_BYTES

log = logging.getLogger(__name__)


def topic_configs(base: str) -> dict[str, str]:
    """Per-topic settings: compaction for the records state topic, room for inline documents."""
    configs = {"max.message.bytes": str(MAX_MESSAGE_BYTES)}
    if base in COMPACTED_TOPICS:
        configs["cleanup.policy"] = "compact"
    return configs


async def ensure_topics(
    bootstrap: str,
    *,
    prefix: str = "",
    partitions: int = 3,
    security: Mapping[str, Any] | None = None,
) -> list[str]:
    """Create every contract topic that is missing; returns the physical names. `security` is
    `kafka_security_options` of the service's settings."""
    names = [topic_name(base, prefix) for base in ALL_TOPICS]
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=15_000, **(security or {})
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [
            NewTopic(topic_name(base, prefix), partitions, 1, topic_configs=topic_configs(base))
            for base in ALL_TOPICS
            if topic_name(base, prefix) not in existing
        ]
        if wanted:
            try:
                await admin.create_topics(wanted)
            except TopicAlreadyExistsError:
                log.debug("topics created concurrently")
    finally:
        await admin.close()
    return names
