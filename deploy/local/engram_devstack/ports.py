"""Free-port picking and a cheap "is anyone listening" check."""

import socket
from contextlib import ExitStack

LOCALHOST = "127.0.0.1"


def free_ports(count: int, host: str = LOCALHOST) -> list[int]:
    """Distinct ports the OS says are free now; all sockets stay bound until every one is picked."""
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(sock.getsockname()[1])
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
