"""The test stacks' retry environment reaches every service's settings."""

from __future__ import annotations

import pytest

from engram_connectors.config import ConnectorsSettings
from engram_embedding.config import EmbeddingSettings
from engram_enrichment.config import EnrichmentSettings
from engram_extraction.config import ExtractionSettings
from engram_gateway.config import GatewaySettings
from engram_ingest.config import IngestSettings
from engram_memory.config import MemorySettings
from engram_platform.settings import ServiceSettings
from tests.support.retries import SERVICES, fast_retries

pytestmark = pytest.mark.unit

SETTINGS: dict[str, type[ServiceSettings]] = {
    "ingest": IngestSettings,
    "extraction": ExtractionSettings,
    "embedding": EmbeddingSettings,
    "memory": MemorySettings,
    "enrichment": EnrichmentSettings,
    "connectors": ConnectorsSettings,
    "gateway": GatewaySettings,
}


@pytest.mark.parametrize("service", SERVICES)
def test_each_service_reads_the_short_backoff(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in fast_retries(0.05, 0.3).items():
        monkeypatch.setenv(name, value)
    settings = SETTINGS[service]()
    assert (settings.retry_base_seconds, settings.retry_max_seconds) == (0.05, 0.3)
