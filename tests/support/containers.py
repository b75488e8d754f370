"""MongoDB 8, Apache Kafka and a Qdrant server in Docker for the test session (testcontainers).

Imported only when the backend is `containers`, so the local backend never loads testcontainers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Self

from pymongo import MongoClient
from testcontainers.core.container import DockerContainer
from testcontainers.core.wait_strategies import HttpWaitStrategy, LogMessageWaitStrategy

from tests.support.backend import KAFKA_IMAGE, MONGO_IMAGE, QDRANT_IMAGE

START_TIMEOUT = 180
"""Seconds each server gets once its container runs (the image pull comes before)."""

KAFKA_PORT = 9092
KAFKA_SCRIPT = "/tmp/engram-start.sh"
KAFKA_SCRIPT_WRITTEN = "/tmp/engram-start.ready"
"""Written after the script, so the container never runs a script still being copied in."""
KAFKA_WAIT_THEN_START = (
    f"while [ ! -f {KAFKA_SCRIPT_WRITTEN} ]; do sleep 0.1; done; exec sh {KAFKA_SCRIPT}"
)
KAFKA_SETTINGS = {
    "CLUSTER_ID": "MkU3OEVBNTcwNTJENDM2Qk",
    "KAFKA_NODE_ID": "1",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9094",
    "KAFKA_LISTENERS": f"PLAINTEXT://:{KAFKA_PORT},BROKER://:9093,CONTROLLER://:9094",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "KAFKA_INTER_BROKER_LISTENER_NAME": "BROKER",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_NUM_PARTITIONS": "3",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
}
"""One KRaft broker+controller with the replication one node allows, like our local broker."""


@dataclass(frozen=True)
class ContainerServers:
    """Where the session's containers answer, from this machine."""

    bootstrap: str
    mongodb_uri: str
    qdrant_url: str


class ApacheKafkaContainer(DockerContainer):
    """`apache/kafka` advertising the host port Docker mapped, which is known only once the
    container runs: the container waits for a start script written after that."""

    def __init__(self, image: str = KAFKA_IMAGE) -> None:
        super().__init__(image)
        self.with_exposed_ports(KAFKA_PORT)
        self.with_envs(**KAFKA_SETTINGS)
        self.with_command(["sh", "-c", KAFKA_WAIT_THEN_START])

    def start(self) -> Self:
        """Start the container, hand it its advertised address, wait until the broker serves."""
        super().start()
        script = (
            f"export KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://{self.bootstrap},"
            "BROKER://$(hostname):9093\n"
            "exec /etc/kafka/docker/run\n"
        )
        self.copy_into_container(script.encode(), KAFKA_SCRIPT)
        self.copy_into_container(b"", KAFKA_SCRIPT_WRITTEN)
        ready = LogMessageWaitStrategy("Kafka Server started")
        ready.with_startup_timeout(START_TIMEOUT).wait_until_ready(self)
        return self

    @property
    def bootstrap(self) -> str:
        """host:port of the broker from this machine."""
        return f"{self.get_container_host_ip()}:{self.get_exposed_port(KAFKA_PORT)}"


def mongo_container() -> DockerContainer:
    """A standalone mongod without users (like the local FerretDB): one start, no init restart."""
    return (
        DockerContainer(MONGO_IMAGE)
        .with_exposed_ports(27017)
        .waiting_for(
            LogMessageWaitStrategy("Waiting for connections").with_startup_timeout(START_TIMEOUT)
        )
    )


def qdrant_container() -> DockerContainer:
    """A Qdrant server, ready when its REST API says so."""
    return (
        DockerContainer(QDRANT_IMAGE)
        .with_exposed_ports(6333)
        .waiting_for(HttpWaitStrategy(6333, "/readyz").with_startup_timeout(START_TIMEOUT))
    )


def wait_for_mongo(uri: str) -> None:
    """A ping through the mapped port: the log line says mongod listens, not that we reach it."""
    client: MongoClient[dict[str, Any]] = MongoClient(
        uri, serverSelectionTimeoutMS=START_TIMEOUT * 1000
    )
    try:
        client.admin.command("ping")
    finally:
        client.close()


@contextmanager
def started_containers() -> Iterator[ContainerServers]:
    """The three servers, removed on exit (and by testcontainers' reaper if this process dies)."""
    with ExitStack() as stack:
        mongo = stack.enter_context(mongo_container())
        kafka = stack.enter_context(ApacheKafkaContainer())
        qdrant = stack.enter_context(qdrant_container())
        uri = f"mongodb://{mongo.get_container_host_ip()}:{mongo.get_exposed_port(27017)}/"
        wait_for_mongo(uri)
        yield ContainerServers(
            bootstrap=kafka.bootstrap,
            mongodb_uri=uri,
            qdrant_url=f"http://{qdrant.get_container_host_ip()}:{qdrant.get_exposed_port(6333)}",
        )
