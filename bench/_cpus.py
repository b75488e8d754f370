"""Which processes serve the broker and database ports, so a bench can move them between CPUs."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

_LISTEN = "0A"


def infra_ports(env: Mapping[str, str]) -> list[int]:
    """The broker's and the database's ports, from the addresses the services are given."""
    ports = [int(a.rsplit(":", 1)[1]) for a in env["KAFKA_BOOTSTRAP_SERVERS"].split(",")]
    mongo = urlsplit(env["MONGODB_URI"]).port
    return ports + ([mongo] if mongo else [])


def listening_pids(ports: Iterable[int]) -> list[int]:
    """Processes with a socket listening on any of `ports` (from /proc; Linux only)."""
    wanted = set(ports)
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            fields = line.split()
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if fields[3] == _LISTEN and port in wanted:
                inodes.add(f"socket:[{fields[9]}]")
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            links = {
                os.readlink(f"/proc/{entry}/fd/{fd}") for fd in os.listdir(f"/proc/{entry}/fd")
            }
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
        if links & inodes:
            pids.append(int(entry))
    return pids
