"""The local broker's optional SASL_PLAINTEXT listener sits beside PLAINTEXT, never instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_devstack.kafka_config import server_properties

pytestmark = pytest.mark.unit


def parsed(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if line)


def test_without_a_sasl_port_the_broker_is_plaintext_only() -> None:
    props = parsed(server_properties(host="h", port=1, controller_port=2, data_dir=Path("/d")))
    assert props["listeners"] == "PLAINTEXT://h:1,CONTROLLER://h:2"
    assert props["advertised.listeners"] == "PLAINTEXT://h:1"
    assert not any("sasl" in key for key in props)


def test_a_sasl_port_adds_a_plain_login_listener() -> None:
    text = server_properties(
        host="h",
        port=1,
        controller_port=2,
        data_dir=Path("/d"),
        sasl_port=3,
        sasl_users={"engram": "pw-1", "other": "pw-2"},
    )
    props = parsed(text)
    assert props["listeners"] == "PLAINTEXT://h:1,SASL_PLAINTEXT://h:3,CONTROLLER://h:2"
    assert props["advertised.listeners"] == "PLAINTEXT://h:1,SASL_PLAINTEXT://h:3"
    assert "SASL_PLAINTEXT:SASL_PLAINTEXT" in props["listener.security.protocol.map"]
    assert props["inter.broker.listener.name"] == "PLAINTEXT"
    assert props["sasl.enabled.mechanisms"] == "PLAIN"
    jaas = props["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    assert jaas.endswith('user_engram="pw-1" user_other="pw-2";')


@pytest.mark.parametrize("users", [{}, {"engram": 'pw"x'}, {"a b": "pw"}])
def test_users_the_login_line_cannot_hold_are_refused(users: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        server_properties(
            host="h", port=1, controller_port=2, data_dir=Path("/d"), sasl_port=3, sasl_users=users
        )
