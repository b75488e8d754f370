"""Settings every service shares; each service subclasses with its own env prefix."""

from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from engram_events.content import DEFAULT_MAX_CHARS, ContentLimits

KafkaSecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
KafkaSaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
TLS_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})


def infra_field(name: str, default: Any = None, why: str = "") -> Any:
    """An unprefixed infrastructure setting, read from `name` as operators spell it."""
    return Field(
        default=default,
        validation_alias=AliasChoices(name, name.lower()),
        description=why,
    )


def consumer_batch_field(default: int, why: str) -> Any:
    """The consumer batch size setting, for a service to override its default and say why; one
    unprefixed name (`ENGRAM_CONSUMER_BATCH_SIZE`) for every service."""
    return Field(
        default=default,
        ge=1,
        le=5000,
        validation_alias=AliasChoices("ENGRAM_CONSUMER_BATCH_SIZE", "consumer_batch_size"),
        description=why,
    )


class ServiceSettings(BaseSettings):
    """Infrastructure addresses use the unprefixed names operators expect; the rest is prefixed."""

    # Inputs stay out of validation errors: a refused combination's error would otherwise
    # print every setting, passwords and MONGODB_URI included, into the start-up log.
    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_", extra="ignore", hide_input_in_errors=True
    )

    kafka_bootstrap_servers: str = Field(
        default="127.0.0.1:9092",
        validation_alias=AliasChoices("KAFKA_BOOTSTRAP_SERVERS", "kafka_bootstrap_servers"),
    )
    mongodb_uri: SecretStr = Field(
        default=SecretStr("mongodb://127.0.0.1:27017"),
        validation_alias=AliasChoices("MONGODB_URI", "mongodb_uri"),
    )
    kafka_security_protocol: KafkaSecurityProtocol = infra_field(
        "KAFKA_SECURITY_PROTOCOL", "PLAINTEXT", "how every Kafka client connects to the brokers"
    )
    kafka_sasl_mechanism: KafkaSaslMechanism | None = infra_field(
        "KAFKA_SASL_MECHANISM", why="the SASL mechanism (SASL_* protocols only)"
    )
    kafka_sasl_username: str | None = infra_field("KAFKA_SASL_USERNAME")
    kafka_sasl_password: SecretStr | None = infra_field("KAFKA_SASL_PASSWORD")
    kafka_ssl_cafile: Path | None = infra_field(
        "KAFKA_SSL_CAFILE",
        why="PEM bundle the brokers' certificates are checked against (unset: the system's CAs)",
    )
    kafka_ssl_certfile: Path | None = infra_field(
        "KAFKA_SSL_CERTFILE", why="client certificate (PEM) for brokers that ask for one (mTLS)"
    )
    kafka_ssl_keyfile: Path | None = infra_field(
        "KAFKA_SSL_KEYFILE",
        why="the client certificate's key, unless the certificate file holds it",
    )
    qdrant_url: str | None = Field(
        default=None, validation_alias=AliasChoices("QDRANT_URL", "qdrant_url")
    )
    qdrant_api_key: SecretStr | None = infra_field(
        "QDRANT_API_KEY", why="the Qdrant server's API key (sent only with QDRANT_URL)"
    )
    topic_prefix: str = Field(
        default="", validation_alias=AliasChoices("ENGRAM_TOPIC_PREFIX", "topic_prefix")
    )
    topic_partitions: int = Field(
        default=3,
        ge=1,
        le=1000,
        validation_alias=AliasChoices("ENGRAM_TOPIC_PARTITIONS", "topic_partitions"),
        description="partitions for topics this service creates when they are missing",
    )
    database_prefix: str = Field(
        default="engram_",
        validation_alias=AliasChoices("ENGRAM_DATABASE_PREFIX", "database_prefix"),
    )
    otlp_endpoint: str | None = Field(
        default=None,
        validation_alias=AliasChoices("OTEL_EXPORTER_OTLP_ENDPOINT", "otlp_endpoint"),
    )
    tracing_enabled: bool = Field(
        default=True, validation_alias=AliasChoices("ENGRAM_TRACING", "tracing_enabled")
    )
    metrics_enabled: bool = Field(
        default=True, validation_alias=AliasChoices("ENGRAM_METRICS", "metrics_enabled")
    )
    metrics_interval_seconds: float = Field(
        default=10.0,
        gt=0,
        validation_alias=AliasChoices(
            "ENGRAM_METRICS_INTERVAL_SECONDS", "metrics_interval_seconds"
        ),
    )
    lag_interval_seconds: float = Field(
        default=15.0,
        gt=0,
        validation_alias=AliasChoices("ENGRAM_LAG_INTERVAL_SECONDS", "lag_interval_seconds"),
    )
    gc_young_threshold: int = Field(
        default=200_000,
        ge=0,
        validation_alias=AliasChoices("ENGRAM_GC_YOUNG_THRESHOLD", "gc_young_threshold"),
        description="allocations between young-generation collections once started (Python's "
        "default is 700; 0 keeps the interpreter's settings and skips the start-up freeze)",
    )
    log_level: str = Field(
        default="INFO", validation_alias=AliasChoices("ENGRAM_LOG_LEVEL", "log_level")
    )
    internal_token: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("ENGRAM_INTERNAL_TOKEN", "internal_token"),
        description="the secret every internal call carries; unset, internal calls are refused",
    )
    max_attempts: int = Field(default=5, ge=1, le=100)
    retry_base_seconds: float = Field(default=0.2, ge=0)
    retry_max_seconds: float = Field(default=5.0, ge=0)
    parked_poll_seconds: float = Field(
        default=1.0,
        gt=0,
        description="the longest the retrier waits before looking at the parked lane again "
        "(a park wakes it at once, and it sleeps only until the earliest row is due)",
    )
    consumer_batch_size: int = consumer_batch_field(100, "inputs per consumer batch")
    consumer_bulk_part: int = Field(
        default=50,
        ge=1,
        le=5000,
        validation_alias=AliasChoices("ENGRAM_CONSUMER_BULK_PART", "consumer_bulk_part"),
        description="bulk-lane inputs handled between turns of the interactive lane: the most "
        "an interactive write waits behind",
    )
    consumer_bulk_share: float = Field(
        default=0.85,
        gt=0,
        le=1,
        validation_alias=AliasChoices("ENGRAM_CONSUMER_BULK_SHARE", "consumer_bulk_share"),
        description="the share of the time the bulk lane runs while interactive inputs are "
        "coming: after each part it rests for the rest, leaving the cores to single writes",
    )
    consumer_poll_ms: int = Field(
        default=5,
        ge=1,
        le=1000,
        validation_alias=AliasChoices("ENGRAM_CONSUMER_POLL_MS", "consumer_poll_ms"),
        description="how long an idle interactive lane waits for an event before it sleeps as "
        "long and fetches again (FastStream's batch subscriber): the most an arriving event "
        "waits; the bulk lane polls every 50 ms",
    )
    consumer_heartbeat_ms: int = Field(
        default=500,
        ge=100,
        le=3000,
        validation_alias=AliasChoices("ENGRAM_CONSUMER_HEARTBEAT_MS", "consumer_heartbeat_ms"),
        description="how often each consumer heartbeats its group: a member that joins or "
        "leaves (a start, a restart, a scale-out) holds every lane of the group until the "
        "others' next heartbeat, so this is the longest a rebalance waits for them",
    )
    relay_interval_seconds: float = Field(default=0.05, gt=0)
    outbox_relay: bool = Field(
        default=True,
        validation_alias=AliasChoices("ENGRAM_OUTBOX_RELAY", "outbox_relay"),
        description="publish staged events from this process (off for a consumer-only instance)",
    )

    memory_min_content_chars: int = Field(
        default=1,
        ge=1,
        validation_alias=AliasChoices(
            "ENGRAM_MEMORY_MIN_CONTENT_CHARS", "memory_min_content_chars"
        ),
        description="the shortest memory (stripped), checked by the gateway and memory alike",
    )
    memory_max_content_chars: int = Field(
        default=DEFAULT_MAX_CHARS,
        ge=1,
        le=32_000,
        validation_alias=AliasChoices(
            "ENGRAM_MEMORY_MAX_CONTENT_CHARS", "memory_max_content_chars"
        ),
        description="the longest memory, checked by the gateway and memory alike",
    )

    memory_conversation_max_messages: int = Field(
        default=100,
        ge=1,
        le=1000,
        validation_alias=AliasChoices(
            "ENGRAM_MEMORY_CONVERSATION_MAX_MESSAGES", "memory_conversation_max_messages"
        ),
        description="the most messages one conversation may carry (each at most the longest "
        "memory), checked by the gateway at the door",
    )

    @field_validator("internal_token", mode="after")
    @classmethod
    def _blank_token_is_unset(cls, token: SecretStr | None) -> SecretStr | None:
        """`ENGRAM_INTERNAL_TOKEN=` is no token, never an empty one every caller matches."""
        return token if token is not None and token.get_secret_value().strip() else None

    @field_validator(
        "kafka_sasl_mechanism",
        "kafka_sasl_username",
        "kafka_ssl_cafile",
        "kafka_ssl_certfile",
        "kafka_ssl_keyfile",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        """A variable set to nothing (a chart's empty value) means unset, not an empty name."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("kafka_security_protocol", "kafka_sasl_mechanism", mode="before")
    @classmethod
    def _upper_case(cls, value: Any) -> Any:
        """`sasl_ssl` and `scram-sha-512` name the same settings as Kafka's own spelling."""
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("kafka_sasl_password", "qdrant_api_key", mode="after")
    @classmethod
    def _blank_secret_is_unset(cls, secret: SecretStr | None) -> SecretStr | None:
        """An empty password or key is none, so the checks below see it missing."""
        return secret if secret is not None and secret.get_secret_value() else None

    @model_validator(mode="after")
    def _kafka_security_can_work(self) -> "ServiceSettings":
        """Refuse at start a Kafka security combination no broker would accept."""
        problems = kafka_security_problems(self)
        if problems:
            raise ValueError("Kafka security settings cannot work: " + "; ".join(problems))
        return self

    @property
    def memory_limits(self) -> ContentLimits:
        """One pair of content bounds for every service that checks memories."""
        return ContentLimits(self.memory_min_content_chars, self.memory_max_content_chars)

    def database_name(self, service: str) -> str:
        """Each service owns one database; the prefix isolates tests and deployments."""
        return f"{self.database_prefix}{service}"

    @property
    def telemetry_database(self) -> str:
        """Where local spans and metric points go when no OTLP endpoint is configured."""
        return f"{self.database_prefix}telemetry"


def kafka_security_problems(settings: ServiceSettings) -> list[str]:
    """What is wrong with the Kafka security variables, each naming the variables involved."""
    protocol = settings.kafka_security_protocol
    problems = []
    sasl = (
        ("KAFKA_SASL_MECHANISM", settings.kafka_sasl_mechanism),
        ("KAFKA_SASL_USERNAME", settings.kafka_sasl_username),
        ("KAFKA_SASL_PASSWORD", settings.kafka_sasl_password),
    )
    if protocol in SASL_PROTOCOLS:
        missing = [name for name, value in sasl if value is None]
        if missing:
            problems.append(f"KAFKA_SECURITY_PROTOCOL={protocol} needs {', '.join(missing)}")
    else:
        stray = [name for name, value in sasl if value is not None]
        if stray:
            problems.append(
                f"{', '.join(stray)} set but KAFKA_SECURITY_PROTOCOL={protocol}: "
                "use SASL_PLAINTEXT or SASL_SSL, or unset them"
            )
    files = (
        ("KAFKA_SSL_CAFILE", settings.kafka_ssl_cafile),
        ("KAFKA_SSL_CERTFILE", settings.kafka_ssl_certfile),
        ("KAFKA_SSL_KEYFILE", settings.kafka_ssl_keyfile),
    )
    if protocol not in TLS_PROTOCOLS:
        given = [name for name, path in files if path is not None]
        if given:
            problems.append(
                f"{', '.join(given)} set but KAFKA_SECURITY_PROTOCOL={protocol}: "
                "use SSL or SASL_SSL, or unset them"
            )
        return problems
    if settings.kafka_ssl_keyfile is not None and settings.kafka_ssl_certfile is None:
        problems.append(
            "KAFKA_SSL_KEYFILE needs KAFKA_SSL_CERTFILE (the certificate the key belongs to)"
        )
    problems.extend(
        f"{name}={path}: no such file" for name, path in files if path and not path.is_file()
    )
    return problems
