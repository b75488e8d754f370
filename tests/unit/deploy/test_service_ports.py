"""Test services listen below the ephemeral range, so a killed one can restart on its port."""

import socket

import pytest

from tests.support.services import LOWEST_PORT, _ephemeral_start, free_port

pytestmark = pytest.mark.unit


def test_service_ports_are_free_and_below_the_ephemeral_range() -> None:
    ports = {free_port() for _ in range(20)}
    assert all(LOWEST_PORT <= port < _ephemeral_start() for port in ports)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))
