"""Free-port picking and a cheap "is anyone listening" check."""

import random
import socket
from collections import deque
from contextlib import ExitStack
from pathlib import Path

LOCALHOST = "127.0.0.1"
LOWEST_PORT = 20000
"""Ports are drawn from here up to where the kernel's ephemeral range begins."""
_PICKED: deque[int] = deque(maxlen=4096)
"""Ports this process picked lately. A port picked for a service is free to the kernel until
that service binds it, so it is not picked again meanwhile: a platform's gateway and its
enrichment service, each given a port a moment apart, once drew the same one and enrichment
could not start."""


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
        if port in _PICKED:
            continue
        try:
            sock.bind((host, port))
        except OSError:
            continue
        return port
    sock.bind((host, 0))
    return int(sock.getsockname()[1])


def free_ports(count: int, host: str = LOCALHOST) -> list[int]:
    """Distinct ports free now, below the ephemeral range and not picked lately by this
    process; all sockets stay bound until every one is picked."""
    ceiling = ephemeral_start()
    with ExitStack() as stack:
        ports = [
            _bind_below_ephemeral(
                stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
                host,
                ceiling,
            )
            for _ in range(count)
        ]
    _PICKED.extend(ports)
    return ports


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
