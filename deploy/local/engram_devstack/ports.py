"""Free-port picking and a cheap "is anyone listening" check."""

import random
import socket
from contextlib import ExitStack
from pathlib import Path

LOCALHOST = "127.0.0.1"
LOWEST_PORT = 20000
"""Ports are drawn from here up to where the kernel's ephemeral range begins."""


def ephemeral_start() -> int:
    """Where the kernel's range of local ports for outgoing connections begins."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bind_below_ephemeral(sock: socket.socket, host: str, ceiling: int) -> int:
    """Bind to a random free port below the ephemeral range (any free port when that range
    starts too low): a process restarted on its port gets it back, whereas an ephemeral port
    can meanwhile become the local end of any outgoing connection (a chaos run's restart once
    failed with "address already in use")."""
    for _ in range(100 if ceiling > LOWEST_PORT + 1000 else 0):
        port = random.randrange(LOWEST_PORT, ceiling)
        try:
            sock.bind((host, port))
        except OSError:
            continue
        return port
    sock.bind((host, 0))
    return int(sock.getsockname()[1])


def free_ports(count: int, host: str = LOCALHOST) -> list[int]:
    """Distinct ports free now, below the ephemeral range; all sockets stay bound until every
    one is picked."""
    ceiling = ephemeral_start()
    with ExitStack() as stack:
        return [
            _bind_below_ephemeral(
                stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
                host,
                ceiling,
            )
            for _ in range(count)
        ]


def free_port(host: str = LOCALHOST) -> int:
    """One free port."""
    return free_ports(1, host)[0]


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
