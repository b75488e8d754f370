"""Engram's local dev stack: a real Kafka broker and FerretDB, fetched, started and stopped."""

from engram_devstack.errors import DevstackError, InstallError, PortInUseError, StartError
from engram_devstack.ferret import FerretServer
from engram_devstack.kafka import KafkaServer
from engram_devstack.paths import Layout
from engram_devstack.ports import free_port, free_ports, port_open
from engram_devstack.server import InstallResult, ManagedServer, ServerStatus
from engram_devstack.topics import create_topics

__all__ = [
    "DevstackError",
    "FerretServer",
    "InstallError",
    "InstallResult",
    "KafkaServer",
    "Layout",
    "ManagedServer",
    "PortInUseError",
    "ServerStatus",
    "StartError",
    "create_topics",
    "free_port",
    "free_ports",
    "port_open",
]
