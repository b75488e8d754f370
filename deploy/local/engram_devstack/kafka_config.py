"""The files a local Kafka needs: the Maven pom that fetches it, broker config, logging config."""

import base64
import re
import uuid
from collections.abc import Mapping
from pathlib import Path

KAFKA_VERSION = "4.1.1"
SCALA_VERSION = "2.13"
LOG4J_VERSION = "2.24.3"

_ARTIFACTS = (
    ("org.apache.kafka", f"kafka_{SCALA_VERSION}", KAFKA_VERSION),
    ("org.apache.kafka", "kafka-tools", KAFKA_VERSION),
    # Kafka's jars resolve slf4j-api 1.7; this binding routes it to log4j2 instead of nowhere.
    ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION),
)


def fetch_pom() -> str:
    """A pom whose only job is to let `mvn dependency:copy-dependencies` collect the broker jars."""
    dependencies = "\n".join(
        f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version></dependency>"
        for group, artifact, version in _ARTIFACTS
    )
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>engram.local</groupId>
  <artifactId>kafka-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""


_JAAS_SAFE = re.compile(r"^[A-Za-z0-9_.@+=-]+$")
"""User names and passwords the JAAS line takes without quoting rules of its own."""


def server_properties(
    *,
    host: str,
    port: int,
    controller_port: int,
    data_dir: Path,
    sasl_port: int | None = None,
    sasl_users: Mapping[str, str] | None = None,
) -> str:
    """A one-node KRaft broker+controller, with the replication settings one node allows.

    With `sasl_port`, a second client listener there takes SASL_PLAINTEXT logins (PLAIN, the
    `sasl_users` name-password pairs); the PLAINTEXT listener and the broker's own traffic
    are unchanged.
    """
    listeners = [f"PLAINTEXT://{host}:{port}"]
    protocols = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    if sasl_port is not None:
        listeners.append(f"SASL_PLAINTEXT://{host}:{sasl_port}")
        protocols += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@{host}:{controller_port}",
        "listeners": ",".join([*listeners, f"CONTROLLER://{host}:{controller_port}"]),
        "advertised.listeners": ",".join(listeners),
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": protocols,
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": "3",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    if sasl_port is not None:
        settings |= sasl_plain_settings(sasl_users or {})
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def sasl_plain_settings(users: Mapping[str, str]) -> dict[str, str]:
    """The SASL_PLAINTEXT listener's PLAIN login module with one `user_<name>` per user."""
    if not users:
        raise ValueError("a SASL listener needs at least one user")
    for name, password in users.items():
        if not (_JAAS_SAFE.match(name) and _JAAS_SAFE.match(password)):
            raise ValueError(f"SASL user {name!r}: names and passwords are [A-Za-z0-9_.@+=-]")
    entries = " ".join(f'user_{name}="{password}"' for name, password in users.items())
    return {
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {entries};"
        ),
    }


def log4j2_properties() -> str:
    """WARN and above to stdout, which the launcher sends to the broker's log file."""
    return """status = warn
name = engram-kafka
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.target = SYSTEM_OUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = INFO
"""


def new_cluster_id() -> str:
    """What `kafka-storage random-uuid` prints (URL-safe base64 of 16 random bytes), sans a JVM."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text
