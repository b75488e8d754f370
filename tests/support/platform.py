"""The whole platform as separate processes on free ports (e2e tests and benchmarks)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from engram_devstack import free_port
from tests.conftest import Infra
from tests.support.retries import fast_retries
from tests.support.services import ServiceProcess, start_together
from tests.support.tenants import create_tenant

BACKENDS = ("ingest", "extraction", "embedding", "memory", "enrichment", "connectors")
GATEWAY_URLS = {
    "ingest": "ENGRAM_GATEWAY_INGEST_URL",
    "extraction": "ENGRAM_GATEWAY_EXTRACTION_URL",
    "memory": "ENGRAM_GATEWAY_MEMORY_URL",
    "enrichment": "ENGRAM_GATEWAY_ENRICHMENT_URL",
}


@dataclass
class Platform:
    """A running platform: the gateway's URL, a tenant's key, and every service process."""

    url: str
    key: str
    env: dict[str, str]
    services: dict[str, ServiceProcess]
    drop_root: Path
    data: Path
    prefix: str = field(default="")

    def client(self, key: str | None = None, timeout: float = 30.0) -> httpx.Client:
        """An HTTP client authenticated as the platform's tenant (or another key)."""
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {key or self.key}"},
            timeout=timeout,
        )

    def logs(self) -> str:
        """Everything every service logged."""
        return "\n".join(proc.logs() for proc in self.services.values())


def start_platform(infra: Infra, root: Path, **extra: str) -> Platform:
    """Start every service on free ports with a unique topic/database prefix, then the gateway."""
    tag = uuid.uuid4().hex[:10]
    data = root / "data"
    drop_root = root / "drop"
    drop_root.mkdir(parents=True)
    env = {
        "KAFKA_BOOTSTRAP_SERVERS": infra.bootstrap,
        "MONGODB_URI": infra.mongodb_uri,
        **infra.qdrant_env(),
        "ENGRAM_TOPIC_PREFIX": f"e{tag}.",
        "ENGRAM_DATABASE_PREFIX": f"e{tag}_",
        "ENGRAM_DATA_DIR": str(data),
        "ENGRAM_MEMORY_VECTOR_PATH": str(data / "vectors" / "memory"),
        "ENGRAM_ENRICHMENT_VECTOR_PATH": str(data / "vectors" / "enrichment"),
        "ENGRAM_CONNECTORS_DROP_ROOT": str(drop_root),
        "ENGRAM_CONNECTORS_DROP_SCAN_INTERVAL_SECONDS": "0.3",
        **fast_retries(0.05, 0.3),
        "ENGRAM_TOPIC_PARTITIONS": "1",
        "ENGRAM_METRICS_INTERVAL_SECONDS": "2",
        **extra,
    }
    logs = root / "logs"
    services = {name: ServiceProcess(name, env, free_port(), logs) for name in BACKENDS}
    gateway_env = {**env, **{var: services[name].url for name, var in GATEWAY_URLS.items()}}
    services["gateway"] = ServiceProcess("gateway", gateway_env, free_port(), logs)
    start_together(*services.values(), timeout=120)
    key = create_tenant(env, "e2e")
    return Platform(
        url=services["gateway"].url,
        key=key,
        env=env,
        services=services,
        drop_root=drop_root,
        data=data,
        prefix=env["ENGRAM_TOPIC_PREFIX"],
    )


def stop_platform(platform: Platform) -> None:
    """Stop every service process."""
    for proc in platform.services.values():
        proc.stop()
