"""The few Kafka requests the dev stack makes, through aiokafka imported only when needed."""

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even when the caller sits inside a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(asyncio.run, coroutine).result()
    finally:
        pool.shutdown(wait=False)


async def describe_cluster(bootstrap: str, request_timeout: float = 5.0) -> dict[str, Any]:
    """A Metadata request: answers only once the broker has joined its controller quorum."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap,
        request_timeout_ms=int(request_timeout * 1000),
        client_id="engram-devstack",
    )
    try:
        async with asyncio.timeout(request_timeout * 2):
            await admin.start()
            info: dict[str, Any] = await admin.describe_cluster()
    finally:
        await admin.close()
    if not info.get("brokers") or info.get("controller_id", -1) < 0:
        raise ConnectionError(f"cluster not formed yet: {info}")
    return info


def check_kafka(bootstrap: str, request_timeout: float = 5.0) -> dict[str, Any]:
    """describe_cluster for sync callers."""
    return run_blocking(describe_cluster(bootstrap, request_timeout))
