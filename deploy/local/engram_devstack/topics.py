"""Idempotent topic creation: the contract's topics exist before any service starts."""

import asyncio
import time
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from engram_devstack.errors import DevstackError

if TYPE_CHECKING:
    from aiokafka.admin import AIOKafkaAdminClient

_TOPIC_ALREADY_EXISTS = 36


class TopicCreationError(DevstackError):
    """The broker refused to create a topic for a reason other than it already existing."""


async def create_topics(
    bootstrap: str,
    topics: Iterable[str],
    compacted: Collection[str] = (),
    partitions: int = 3,
    *,
    replication_factor: int = 1,
    request_timeout: float = 30.0,
) -> list[str]:
    """Create missing topics (compacted ones with cleanup.policy=compact); returns those created."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    wanted = list(dict.fromkeys(topics))
    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap,
        request_timeout_ms=int(request_timeout * 1000),
        client_id="engram-devstack",
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [name for name in wanted if name not in existing]
        if missing:
            response = await admin.create_topics(
                [
                    NewTopic(
                        name,
                        num_partitions=partitions,
                        replication_factor=replication_factor,
                        topic_configs={"cleanup.policy": "compact"} if name in compacted else {},
                    )
                    for name in missing
                ],
                timeout_ms=int(request_timeout * 1000),
            )
            _raise_on_errors(response.topic_errors)
        await _wait_visible(admin, wanted, time.monotonic() + request_timeout)
    finally:
        await admin.close()
    return missing


def _raise_on_errors(topic_errors: Iterable[tuple[object, ...]]) -> None:
    failures = [
        f"{entry[0]}: error {entry[1]}" + (f" ({entry[2]})" if len(entry) > 2 and entry[2] else "")
        for entry in topic_errors
        if entry[1] not in (0, _TOPIC_ALREADY_EXISTS)
    ]
    if failures:
        raise TopicCreationError("could not create topics: " + "; ".join(failures))


async def _wait_visible(admin: "AIOKafkaAdminClient", names: list[str], deadline: float) -> None:
    """Creation returns before metadata propagates; consumers started right after need it."""
    while True:
        visible = set(await admin.list_topics())
        if visible.issuperset(names):
            return
        if time.monotonic() > deadline:
            missing = sorted(set(names) - visible)
            raise TopicCreationError(f"topics still not visible in metadata: {missing}")
        await asyncio.sleep(0.2)
