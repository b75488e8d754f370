"""Reading and writing topics directly, to observe what services publish."""

from __future__ import annotations

import json
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from tests.support.polling import until_async


async def produce(bootstrap: str, topic: str, values: list[bytes], key: bytes = b"k") -> None:
    """Publish raw bytes, as a misbehaving or replaying producer would."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
    await producer.start()
    try:
        for value in values:
            await producer.send_and_wait(topic, value, key=key)
    finally:
        await producer.stop()


async def read_all(
    bootstrap: str, topic: str, *, settle: float = 1.5
) -> list[dict[str, Any] | None]:
    """Every message on a topic from the start, decoded as JSON (None for tombstones)."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    out: list[dict[str, Any] | None] = []
    try:
        idle = 0.0
        while idle < settle:
            batch = await consumer.getmany(timeout_ms=300)
            if not batch:
                idle += 0.3
                continue
            idle = 0.0
            for records in batch.values():
                out.extend(_parse(r.value) for r in records)
    finally:
        await consumer.stop()
    return out


def _parse(value: bytes | None) -> dict[str, Any] | None:
    """JSON messages as dicts; anything else kept raw under `_raw` (None for tombstones)."""
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return {"_raw": value}
    return parsed if isinstance(parsed, dict) else {"_raw": value}


async def wait_for(
    bootstrap: str, topic: str, predicate: Any, *, count: int = 1, timeout: float = 30.0
) -> list[dict[str, Any]]:
    """Poll a topic until `count` messages match, or fail with what was seen."""

    async def matching() -> list[dict[str, Any]]:
        return [m for m in await read_all(bootstrap, topic, settle=0.6) if m and predicate(m)]

    seen: list[dict[str, Any]] = await until_async(
        matching,
        f"{count} matching messages on {topic}",
        timeout,
        0.3,
        ready=lambda seen: len(seen) >= count,
    )
    return seen
