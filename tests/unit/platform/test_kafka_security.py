"""The Kafka security variables: combinations that cannot work stop a service at start with the
variables named, and the ones that can map to the same options for every kind of client."""

from __future__ import annotations

import functools
import ssl
from pathlib import Path
from typing import Any

import aiokafka
import certifi
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from faststream.kafka.security import parse_security
from pydantic import ValidationError

from engram_platform.broker import make_broker
from engram_platform.kafka_security import broker_security, kafka_security_options
from engram_platform.sending import producer_options
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit

SECURITY_VARIABLES = (
    "KAFKA_SECURITY_PROTOCOL",
    "KAFKA_SASL_MECHANISM",
    "KAFKA_SASL_USERNAME",
    "KAFKA_SASL_PASSWORD",
    "KAFKA_SSL_CAFILE",
    "KAFKA_SSL_CERTFILE",
    "KAFKA_SSL_KEYFILE",
    "QDRANT_API_KEY",
)
CA = certifi.where()
"""A real PEM bundle, so the TLS context loads something."""


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Settings read from the environment as a pod's are, starting from none of these set."""
    for name in SECURITY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def settings_from(env: pytest.MonkeyPatch, **variables: str) -> ServiceSettings:
    for name, value in variables.items():
        env.setenv(name, value)
    return ServiceSettings()


def refusal(env: pytest.MonkeyPatch, **variables: str) -> str:
    with pytest.raises(ValidationError) as caught:
        settings_from(env, **variables)
    return str(caught.value)


SASL = {
    "KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
    "KAFKA_SASL_MECHANISM": "PLAIN",
    "KAFKA_SASL_USERNAME": "engram",
    "KAFKA_SASL_PASSWORD": "pw-5b1e",
}


def test_plaintext_is_the_default_and_adds_nothing(env: pytest.MonkeyPatch) -> None:
    settings = settings_from(env)
    assert kafka_security_options(settings) == {"security_protocol": "PLAINTEXT"}
    assert broker_security(settings) is None
    assert settings.qdrant_api_key is None


def test_sasl_plaintext_maps_to_aiokafka_keywords(env: pytest.MonkeyPatch) -> None:
    settings = settings_from(env, **SASL)
    assert kafka_security_options(settings) == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "engram",
        "sasl_plain_password": "pw-5b1e",
    }


def test_sasl_ssl_with_scram_verifies_the_brokers(env: pytest.MonkeyPatch) -> None:
    variables = {
        **SASL,
        "KAFKA_SECURITY_PROTOCOL": "sasl_ssl",
        "KAFKA_SASL_MECHANISM": "scram-sha-512",
        "KAFKA_SSL_CAFILE": CA,
    }
    settings = settings_from(env, **variables)
    options = kafka_security_options(settings)
    context = options.pop("ssl_context")
    assert options == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "engram",
        "sasl_plain_password": "pw-5b1e",
    }
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_ssl_alone_takes_the_system_cas_when_no_file_is_given(env: pytest.MonkeyPatch) -> None:
    options = kafka_security_options(settings_from(env, KAFKA_SECURITY_PROTOCOL="SSL"))
    assert options["security_protocol"] == "SSL"
    assert options["ssl_context"].verify_mode == ssl.CERT_REQUIRED
    assert set(options) == {"security_protocol", "ssl_context"}


def without_context(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "ssl_context"}


@pytest.mark.parametrize(
    "variables",
    [
        {"KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CAFILE": CA},
        SASL,
        {**SASL, "KAFKA_SASL_MECHANISM": "SCRAM-SHA-256"},
        {**SASL, "KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-512"},
    ],
)
def test_the_broker_gets_what_every_other_client_gets(
    env: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    """FastStream turns the security object back into aiokafka keywords: they must match."""
    settings = settings_from(env, **variables)
    ours = kafka_security_options(settings)
    faststreams = parse_security(broker_security(settings))
    assert without_context(faststreams) == without_context(ours)
    assert ("ssl_context" in ours) == isinstance(faststreams["ssl_context"], ssl.SSLContext)


async def test_every_client_kind_accepts_the_options(env: pytest.MonkeyPatch) -> None:
    """aiokafka checks the keywords when a client is built (no connection is made)."""
    variables = {**SASL, "KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "KAFKA_SSL_CAFILE": CA}
    settings = settings_from(env, **variables)
    options = kafka_security_options(settings)
    producer = aiokafka.AIOKafkaProducer(**producer_options(settings, service="ingest"))
    consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers="127.0.0.1:1", **options)
    admin = AIOKafkaAdminClient(bootstrap_servers="127.0.0.1:1", **options)
    assert producer.client._security_protocol == "SASL_SSL"
    assert consumer._client._sasl_mechanism == "PLAIN"
    assert admin._client._sasl_plain_username == "engram"
    builder = make_broker(settings, service="ingest").config.broker_config.builder
    assert isinstance(builder, functools.partial), "FastStream builds consumers from a partial"
    consumers = builder.keywords
    assert consumers["security_protocol"] == "SASL_SSL"
    assert consumers["sasl_plain_password"] == "pw-5b1e"
    await producer.stop()
    await consumer.stop()
    await admin.close()


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        (
            {"KAFKA_SECURITY_PROTOCOL": "SASL_SSL"},
            ["KAFKA_SASL_MECHANISM", "KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD"],
        ),
        ({**SASL, "KAFKA_SASL_PASSWORD": ""}, ["SASL_PLAINTEXT needs KAFKA_SASL_PASSWORD"]),
        ({**SASL, "KAFKA_SASL_USERNAME": " "}, ["needs KAFKA_SASL_USERNAME"]),
        (
            {"KAFKA_SASL_MECHANISM": "PLAIN"},
            ["KAFKA_SASL_MECHANISM set but KAFKA_SECURITY_PROTOCOL=PLAINTEXT"],
        ),
        (
            {**SASL, "KAFKA_SECURITY_PROTOCOL": "SSL"},
            ["KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD set"],
        ),
        ({**SASL, "KAFKA_SSL_CAFILE": CA}, ["KAFKA_SSL_CAFILE set but KAFKA_SECURITY_PROTOCOL"]),
        (
            {"KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CAFILE": "/nonexistent/ca.pem"},
            ["KAFKA_SSL_CAFILE=/nonexistent/ca.pem: no such file"],
        ),
        (
            {"KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_KEYFILE": CA},
            ["KAFKA_SSL_KEYFILE needs KAFKA_SSL_CERTFILE"],
        ),
        ({"KAFKA_SECURITY_PROTOCOL": "TLS"}, ["KAFKA_SECURITY_PROTOCOL", "SASL_SSL"]),
        ({**SASL, "KAFKA_SASL_MECHANISM": "GSSAPI"}, ["SCRAM-SHA-512"]),
    ],
)
def test_a_combination_that_cannot_work_stops_the_start(
    env: pytest.MonkeyPatch, variables: dict[str, str], named: list[str]
) -> None:
    message = refusal(env, **variables)
    for text in named:
        assert text in message, message
    assert "pw-5b1e" not in message


def test_secrets_stay_out_of_the_settings_text(env: pytest.MonkeyPatch) -> None:
    settings = settings_from(env, **SASL, QDRANT_API_KEY="qk-77a0")
    assert "pw-5b1e" not in repr(settings) and "qk-77a0" not in repr(settings)
    assert settings.qdrant_api_key is not None
    assert settings.qdrant_api_key.get_secret_value() == "qk-77a0"


def test_an_empty_mechanism_from_a_chart_is_unset(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = settings_from(env, KAFKA_SASL_MECHANISM="", KAFKA_SSL_CAFILE="")
    assert settings.kafka_sasl_mechanism is None and settings.kafka_ssl_cafile is None


def test_a_service_refusal_prints_no_setting_value(env: pytest.MonkeyPatch) -> None:
    """Each service's settings inherit the hidden inputs: the refusal names, never shows."""
    from engram_ingest.config import IngestSettings

    env.setenv("MONGODB_URI", "mongodb://engram:db-pw-90e3@m0/")
    for name, value in {**SASL, "KAFKA_SASL_USERNAME": ""}.items():
        env.setenv(name, value)
    with pytest.raises(ValidationError) as caught:
        IngestSettings()
    message = str(caught.value)
    assert "needs KAFKA_SASL_USERNAME" in message
    assert "pw-5b1e" not in message and "db-pw-90e3" not in message
