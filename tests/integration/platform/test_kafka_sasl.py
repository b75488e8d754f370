"""Through a real broker's SASL_PLAINTEXT listener (PLAIN): the platform creates topics,
publishes and consumes with the right password, and a wrong one stops a service at once with
the variables named. The broker is this test's own (free ports), never the shared one."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError

from engram_devstack import KafkaServer, Layout, free_ports
from engram_events import Topics, topic_name
from engram_gateway.adapters.dead_letters import REPLAYS, DeadLetterBox
from engram_platform.broker import make_broker
from engram_platform.kafka_security import (
    KafkaLoginRefused,
    check_kafka_login,
    kafka_security_options,
)
from engram_platform.metrics import ConsumerLagSampler
from engram_platform.sending import KafkaSender, producer_options
from engram_platform.settings import ServiceSettings
from engram_platform.topics import ensure_topics
from tests.support.services import ServiceProcess

pytestmark = pytest.mark.integration

PASSWORD = "sasl-pw-1c7e"


@pytest.fixture(scope="module")
def sasl_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaServer]:
    """A one-node broker with a PLAINTEXT listener and a SASL_PLAINTEXT one beside it."""
    port, controller_port, sasl_port = free_ports(3)
    server = KafkaServer(
        tmp_path_factory.mktemp("sasl") / "state",
        port,
        controller_port,
        cache_dir=Layout.discover().cache_dir,
        heap_mb=384,
        sasl_port=sasl_port,
        sasl_users={"engram": PASSWORD},
    )
    server.ensure_installed()
    server.start()
    try:
        server.wait_ready(120)
        yield server
    finally:
        server.stop()


class NotReplaying:
    """Reading the DLQ publishes nothing; a replay here would be a bug in the test."""

    async def publish(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the DLQ reader replayed a letter")


def sasl_settings(kafka: KafkaServer, password: str = PASSWORD, **extra: Any) -> ServiceSettings:
    return ServiceSettings(
        KAFKA_BOOTSTRAP_SERVERS=kafka.sasl_address,
        KAFKA_SECURITY_PROTOCOL="SASL_PLAINTEXT",
        KAFKA_SASL_MECHANISM="PLAIN",
        KAFKA_SASL_USERNAME="engram",
        KAFKA_SASL_PASSWORD=password,
        ENGRAM_TOPIC_PREFIX=f"sasl{uuid.uuid4().hex[:8]}.",
        **extra,
    )


async def test_the_platform_publishes_and_consumes_through_sasl(sasl_kafka: KafkaServer) -> None:
    settings = sasl_settings(sasl_kafka)
    await check_kafka_login(settings)
    names = await ensure_topics(
        settings.kafka_bootstrap_servers,
        prefix=settings.topic_prefix,
        partitions=1,
        security=kafka_security_options(settings),
    )
    topic = names[0]
    broker = make_broker(settings, service="sasl-test")
    received: asyncio.Queue[dict[str, int]] = asyncio.Queue()

    @broker.subscriber(topic, group_id=f"{settings.topic_prefix}g", auto_offset_reset="earliest")
    async def handle(body: dict[str, int]) -> None:
        await received.put(body)

    await broker.start()
    try:
        await broker.sender.send(
            [
                {
                    "_id": f"e{i}",
                    "topic": topic,
                    "key": "k",
                    "value": f'{{"n": {i}}}'.encode(),
                    "headers": {},
                    "event_type": "sasl.test",
                }
                for i in range(3)
            ]
        )
        got = [await asyncio.wait_for(received.get(), 60) for _ in range(3)]
        assert await broker.ping(timeout=5.0)
    finally:
        await broker.stop()
    assert sorted(body["n"] for body in got) == [0, 1, 2]


async def test_the_lag_sampler_and_the_dlq_reader_read_through_sasl(
    sasl_kafka: KafkaServer,
) -> None:
    settings = sasl_settings(sasl_kafka)
    security = kafka_security_options(settings)
    await ensure_topics(
        settings.kafka_bootstrap_servers, prefix=settings.topic_prefix, security=security
    )
    dlq = topic_name(Topics.DLQ, settings.topic_prefix)
    sender = KafkaSender(producer_options(settings, service="sasl-test"))
    await sender.start()
    try:
        await sender.send_records(dlq, [(b"k", b'{"dead": 1}', []), (b"k", b'{"dead": 2}', [])])
        await sender.producer.flush()
    finally:
        await sender.stop()
    sampler = ConsumerLagSampler(
        bootstrap=settings.kafka_bootstrap_servers,
        security=security,
        service="sasl-test",
        group_id=f"{settings.topic_prefix}never-consumed",
        topics=[dlq],
        interval=0.2,
    )
    sampling = asyncio.create_task(sampler.run())
    try:
        for _ in range(150):
            if sampler.last:
                break
            await asyncio.sleep(0.2)
    finally:
        sampling.cancel()
        await asyncio.gather(sampling, return_exceptions=True)
    assert sampler.last == {dlq: 2}
    box = DeadLetterBox(
        bootstrap=settings.kafka_bootstrap_servers,
        topic_prefix=settings.topic_prefix,
        db={REPLAYS: None},
        publisher=NotReplaying(),
        security=security,
    )
    read = await box._read_topic()
    assert sorted(value for _, _, value in read) == [b'{"dead": 1}', b'{"dead": 2}']


async def test_a_wrong_password_is_refused_with_the_variables_named(
    sasl_kafka: KafkaServer,
) -> None:
    settings = sasl_settings(sasl_kafka, password="not-the-password")
    with pytest.raises(KafkaLoginRefused) as refused:
        await check_kafka_login(settings)
    message = str(refused.value)
    assert "KAFKA_SASL_USERNAME='engram'" in message and "KAFKA_SASL_PASSWORD" in message
    assert "not-the-password" not in message
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap_servers, **kafka_security_options(settings)
    )
    with pytest.raises(KafkaConnectionError):
        await producer.start()
    await producer.stop()


async def test_the_plaintext_listener_still_serves_without_a_login(
    sasl_kafka: KafkaServer,
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=sasl_kafka.address)
    await producer.start()
    try:
        await producer.send_and_wait(f"plain{uuid.uuid4().hex[:8]}", b"x")
    finally:
        await producer.stop()


def service_env(kafka: KafkaServer, password: str) -> dict[str, str]:
    return {
        "KAFKA_BOOTSTRAP_SERVERS": str(kafka.sasl_address),
        "KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "KAFKA_SASL_MECHANISM": "PLAIN",
        "KAFKA_SASL_USERNAME": "engram",
        "KAFKA_SASL_PASSWORD": password,
    }


def test_a_service_runs_over_sasl_and_stops_at_once_on_a_wrong_password(
    sasl_kafka: KafkaServer, service: Callable[..., ServiceProcess]
) -> None:
    """Ingest gets ready (topics, consumer group, relay, broker ping) through the SASL listener;
    with a wrong password it exits instead of retrying, its log naming what to check."""
    ready = service("ingest", **service_env(sasl_kafka, PASSWORD))
    assert httpx.get(f"{ready.url}/readyz", timeout=5.0).status_code == 200
    ready.stop()
    refused = service("ingest", start=False, **service_env(sasl_kafka, "wrong-pw-33"))
    refused.start(wait=False)
    assert refused.proc is not None
    code = refused.proc.wait(timeout=90)
    log = refused.logs()
    assert code != 0, log[-2000:]
    assert "refused the PLAIN login" in log and "KAFKA_SASL_PASSWORD" in log, log[-2000:]
    assert "wrong-pw-33" not in log
