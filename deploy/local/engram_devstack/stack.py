"""Kafka plus a MongoDB-protocol server as one unit: local, external, or a loud weaker fallback."""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from engram_devstack import mongo_wire
from engram_devstack.errors import DevstackError, InstallError
from engram_devstack.fallbacks import MONGOECO_LIMITS, TANSU_LIMITS, MongoecoServer, TansuServer
from engram_devstack.ferret import FerretServer
from engram_devstack.kafka import KafkaServer
from engram_devstack.kafka_client import check_kafka, run_blocking
from engram_devstack.paths import Layout
from engram_devstack.progress import Stopwatch, say, shout
from engram_devstack.server import ManagedServer
from engram_devstack.signals import signals_deferred
from engram_devstack.topics import create_topics

KAFKA_ENV = "KAFKA_BOOTSTRAP_SERVERS"
MONGO_ENV = "MONGODB_URI"


@dataclass(frozen=True)
class Ports:
    """Where the local servers listen; flags override ENGRAM_*_PORT, which override defaults."""

    kafka: int = 9092
    kafka_controller: int = 9093
    mongo: int = 27017

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> "Ports":
        defaults = cls()
        return cls(
            kafka=int(environ.get("ENGRAM_KAFKA_PORT", defaults.kafka)),
            kafka_controller=int(
                environ.get("ENGRAM_KAFKA_CONTROLLER_PORT", defaults.kafka_controller)
            ),
            mongo=int(environ.get("ENGRAM_MONGO_PORT", defaults.mongo)),
        )


@dataclass(frozen=True)
class Endpoints:
    """What services and tools need to reach the stack."""

    kafka_bootstrap_servers: str
    mongodb_uri: str

    def as_env(self) -> dict[str, str]:
        return {KAFKA_ENV: self.kafka_bootstrap_servers, MONGO_ENV: self.mongodb_uri}


class Stack:
    """Brings Kafka and the MongoDB-protocol server up and down, saying what it does."""

    def __init__(
        self,
        layout: Layout,
        ports: Ports,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.layout = layout
        self.ports = ports
        self.external_kafka = environ.get(KAFKA_ENV) or None
        self.external_mongo = environ.get(MONGO_ENV) or None
        self.topic_prefix = environ.get("ENGRAM_TOPIC_PREFIX", "")
        self._kafka: ManagedServer | None = None
        self._mongo: ManagedServer | None = None
        self.started: set[str] = set()
        """Names of the servers this stack started (not ones it found running and reused)."""

    def kafka_server(self) -> KafkaServer:
        return KafkaServer(
            self.layout.data_dir,
            self.ports.kafka,
            self.ports.kafka_controller,
            cache_dir=self.layout.cache_dir,
            log_dir=self.layout.logs_dir,
        )

    def ferret_server(self) -> FerretServer:
        return FerretServer(
            self.layout.data_dir,
            self.ports.mongo,
            cache_dir=self.layout.cache_dir,
            log_dir=self.layout.logs_dir,
        )

    def tansu_server(self) -> TansuServer:
        return TansuServer(
            self.layout.data_dir,
            self.ports.kafka,
            cache_dir=self.layout.cache_dir,
            log_dir=self.layout.logs_dir,
        )

    def mongoeco_server(self) -> MongoecoServer:
        return MongoecoServer(
            self.layout.data_dir,
            self.ports.mongo,
            cache_dir=self.layout.cache_dir,
            log_dir=self.layout.logs_dir,
        )

    def all_local_servers(self) -> list[ManagedServer]:
        """Every server `down` may have to stop, fallbacks included: the database, then Kafka."""
        return [
            self.ferret_server(),
            self.mongoeco_server(),
            self.kafka_server(),
            self.tansu_server(),
        ]

    def install_kafka(self) -> ManagedServer:
        """The real broker, or tansu (said loudly) when Maven or Java cannot provide it."""
        self._kafka = _install_with_fallback(self.kafka_server(), self.tansu_server(), TANSU_LIMITS)
        return self._kafka

    def install_mongo(self) -> ManagedServer:
        """FerretDB, or mongoeco (said loudly) when Go cannot build it."""
        self._mongo = _install_with_fallback(
            self.ferret_server(), self.mongoeco_server(), MONGOECO_LIMITS
        )
        return self._mongo

    def up_kafka(self) -> str:
        """Start (or reuse, or use the external) Kafka; returns bootstrap servers once ready."""
        if self.external_kafka:
            say(f"kafka: using external {KAFKA_ENV}={self.external_kafka}; not starting one")
            watch = Stopwatch()
            check_kafka(self.external_kafka, request_timeout=10.0)
            say(f"kafka: external cluster answers {watch}")
            return self.external_kafka
        server = self._kafka or self.install_kafka()
        if start_and_wait(server, timeout=120.0):
            self.started.add(server.name)
        return server.address

    def up_mongo(self) -> str:
        """Start (or reuse, or use the external) MongoDB-protocol server; returns its URI."""
        if self.external_mongo:
            say(f"mongodb: using external {MONGO_ENV}; not starting a local server")
            _check_external_mongo(self.external_mongo)
            return self.external_mongo
        server = self._mongo or self.install_mongo()
        if start_and_wait(server, timeout=60.0):
            self.started.add(server.name)
        return f"mongodb://{server.address}/"

    def up(self) -> Endpoints:
        """Both servers, then the contract's topics."""
        mongodb_uri = self.up_mongo()
        bootstrap = self.up_kafka()
        self.ensure_topics(bootstrap)
        return Endpoints(bootstrap, mongodb_uri)

    def ensure_topics(self, bootstrap: str) -> None:
        """Create the contract's topics (with ENGRAM_TOPIC_PREFIX) if they are missing."""
        names, compacted = contract_topics(self.topic_prefix)
        watch = Stopwatch()
        created = run_blocking(create_topics(bootstrap, names, compacted))
        if created:
            say(f"topics: created {len(created)} of {len(names)} {watch}")
        else:
            say(f"topics: all {len(names)} exist {watch}")

    def down(self, *, only_started: bool = False) -> None:
        """Stop every local server of ours (with `only_started`, only those this stack started:
        servers `make infra` left running stay up); external ones are never touched."""
        for server in self.all_local_servers():
            if only_started and server.name not in self.started:
                if server.running_pid() is not None:
                    say(
                        f"{server.name}: left running (it was running before; `make down` stops it)"
                    )
                continue
            watch = Stopwatch()
            if server.stop():
                say(f"{server.name}: stopped {watch}")

    def servers_in_use(self) -> list[ManagedServer]:
        """The local servers up() chose (none for external ones), for the supervisor to watch."""
        return [server for server in (self._mongo, self._kafka) if server is not None]

    def statuses(self) -> list[str]:
        statuses = [server.status() for server in self.all_local_servers()]
        running = [status.describe() for status in statuses if status.running]
        return running or ["no local servers running"]


def _install_with_fallback(
    primary: ManagedServer, fallback: ManagedServer, limits: str
) -> ManagedServer:
    try:
        return install(primary)
    except InstallError as error:
        shout(
            f"{primary.name} could not be installed, so the WEAKER FALLBACK {fallback.name} "
            f"is in use. Why: {error}. Limits: {limits}."
        )
    return install(fallback)


def install(server: ManagedServer) -> ManagedServer:
    """ensure_installed with one progress line."""
    watch = Stopwatch()
    result = server.ensure_installed()
    say(f"{server.name}: {result.summary} {watch}")
    return server


def start_and_wait(server: ManagedServer, timeout: float) -> bool:
    """start() then wait_ready(), with one progress line; whether it was started (not reused)."""
    watch = Stopwatch()
    with signals_deferred():
        started = server.start()
    server.wait_ready(timeout)
    if started:
        say(f"{server.name}: started at {server.address}, ready {watch}")
    else:
        say(f"{server.name}: already running at {server.address}, reused {watch}")
    return bool(started)


def _check_external_mongo(uri: str) -> None:
    """Ping a plain mongodb:// URI; ones with credentials or TLS are left to the services."""
    parts = urlsplit(uri)
    plain = parts.scheme == "mongodb" and not any(mark in parts.netloc for mark in "@,")
    if not plain or "tls" in parts.query or "ssl" in parts.query:
        say("mongodb: external server not checked (credentials, TLS or several hosts)")
        return
    watch = Stopwatch()
    mongo_wire.ping(parts.hostname or "127.0.0.1", parts.port or 27017)
    say(f"mongodb: external server answers ping {watch}")


def contract_topics(prefix: str) -> tuple[list[str], set[str]]:
    """Topic names from the events library, the single source of the contract."""
    try:
        from engram_events.topics import ALL_TOPICS, COMPACTED_TOPICS, topic_name
    except ImportError as error:
        raise DevstackError(
            f"cannot read topic names: engram_events is not importable ({error}); "
            "install it with `pip install -e libs/events`"
        ) from error
    names = [topic_name(base, prefix) for base in ALL_TOPICS]
    compacted = {topic_name(base, prefix) for base in COMPACTED_TOPICS}
    return names, compacted
