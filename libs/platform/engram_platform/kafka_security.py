"""The one mapping from the Kafka security settings to what each kind of client takes.

Every aiokafka client a service builds (the sender's producer, the lag sampler's admin and
consumer, topic creation, the DLQ reader) takes `kafka_security_options`; FastStream's broker,
which builds its own consumers, takes the same settings as `broker_security`.
"""

from __future__ import annotations

from ssl import SSLContext
from typing import Any

from aiokafka.conn import create_conn
from aiokafka.errors import KafkaError, SaslAuthenticationFailed
from aiokafka.helpers import create_ssl_context
from faststream.security import (
    BaseSecurity,
    SASLPlaintext,
    SASLScram256,
    SASLScram512,
)

from engram_platform.settings import SASL_PROTOCOLS, TLS_PROTOCOLS, ServiceSettings

_BROKER_SASL: dict[str, type[SASLPlaintext | SASLScram256 | SASLScram512]] = {
    "PLAIN": SASLPlaintext,
    "SCRAM-SHA-256": SASLScram256,
    "SCRAM-SHA-512": SASLScram512,
}
LOGIN_ADVICE = "check KAFKA_SASL_PASSWORD, KAFKA_SASL_MECHANISM and the user on the brokers"


class KafkaLoginRefused(RuntimeError):
    """The brokers answered and refused the configured credentials: retrying cannot help."""

    def __init__(self, server: str, mechanism: str, username: str, reason: str) -> None:
        self.server = server
        self.mechanism = mechanism
        self.username = username
        self.reason = reason
        super().__init__(
            f"Kafka at {server} refused the {mechanism} login of "
            f"KAFKA_SASL_USERNAME={username!r} ({reason}): {LOGIN_ADVICE}"
        )


def kafka_ssl_context(settings: ServiceSettings) -> SSLContext | None:
    """A verifying TLS context (hostname checked) for the SSL protocols, else None."""
    if settings.kafka_security_protocol not in TLS_PROTOCOLS:
        return None
    context: SSLContext = create_ssl_context(
        cafile=settings.kafka_ssl_cafile,
        certfile=settings.kafka_ssl_certfile,
        keyfile=settings.kafka_ssl_keyfile,
    )
    return context


def _credentials(settings: ServiceSettings) -> tuple[str, str, str]:
    """Mechanism, username and password; the settings' own check guarantees all three."""
    mechanism, username = settings.kafka_sasl_mechanism, settings.kafka_sasl_username
    password = settings.kafka_sasl_password
    if mechanism is None or username is None or password is None:
        raise ValueError("KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD")
    return mechanism, username, password.get_secret_value()


def kafka_security_options(settings: ServiceSettings) -> dict[str, Any]:
    """aiokafka's security keywords, the same for a producer, a consumer and an admin client."""
    protocol = settings.kafka_security_protocol
    options: dict[str, Any] = {"security_protocol": protocol}
    context = kafka_ssl_context(settings)
    if context is not None:
        options["ssl_context"] = context
    if protocol in SASL_PROTOCOLS:
        mechanism, username, password = _credentials(settings)
        options |= {
            "sasl_mechanism": mechanism,
            "sasl_plain_username": username,
            "sasl_plain_password": password,
        }
    return options


def broker_security(settings: ServiceSettings) -> BaseSecurity | None:
    """The same settings as FastStream's `security=` object (None: plaintext, no login)."""
    protocol = settings.kafka_security_protocol
    context = kafka_ssl_context(settings)
    if protocol not in SASL_PROTOCOLS:
        return None if context is None else BaseSecurity(ssl_context=context, use_ssl=True)
    mechanism, username, password = _credentials(settings)
    return _BROKER_SASL[mechanism](
        username, password, ssl_context=context, use_ssl=context is not None
    )


async def check_kafka_login(settings: ServiceSettings, timeout_seconds: float = 10.0) -> None:
    """Raise KafkaLoginRefused, naming the variables, when a broker refuses the SASL login.

    aiokafka reports a refused login as "Unable to bootstrap" (the broker's reason goes only to
    its log), which start-up would retry like a broker still starting; a broker that does not
    answer yet is left to that retry.
    """
    if settings.kafka_security_protocol not in SASL_PROTOCOLS:
        return
    options = kafka_security_options(settings)
    for server in settings.kafka_bootstrap_servers.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            connection = await create_conn(
                host.strip("[]"),
                int(port),
                request_timeout_ms=int(timeout_seconds * 1000),
                **options,
            )
        except SaslAuthenticationFailed as exc:
            raise KafkaLoginRefused(
                server.strip(),
                str(settings.kafka_sasl_mechanism),
                str(settings.kafka_sasl_username),
                str(exc.args[0]) if exc.args else type(exc).__name__,
            ) from exc
        except (TimeoutError, OSError, KafkaError):
            continue
        connection.close()
        return
