"""Ports are picked below the ephemeral range, so a killed process can restart on its port."""

import socket

import pytest

from engram_devstack.ports import LOWEST_PORT, ephemeral_start, free_port, free_ports

pytestmark = pytest.mark.unit


def test_ports_are_distinct_free_and_below_the_ephemeral_range() -> None:
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(LOWEST_PORT <= port < ephemeral_start() for port in ports)
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_ports_picked_one_call_at_a_time_are_distinct() -> None:
    ports = [free_port() for _ in range(500)]
    assert len(set(ports)) == 500, "a port picked earlier was picked again before it was bound"
