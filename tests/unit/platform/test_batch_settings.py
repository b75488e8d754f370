"""One unprefixed name sets every service's consumer batch size; each keeps its own default."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from engram_enrichment.config import EnrichmentSettings
from engram_memory.config import MemorySettings
from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit


def test_each_service_keeps_its_default_until_the_shared_name_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ENGRAM_CONSUMER_BATCH_SIZE", raising=False)
    defaults = [
        s().consumer_batch_size for s in (ServiceSettings, MemorySettings, EnrichmentSettings)
    ]
    assert defaults == [100, 1000, 5000]
    monkeypatch.setenv("ENGRAM_CONSUMER_BATCH_SIZE", "7")
    assert {
        s().consumer_batch_size for s in (ServiceSettings, MemorySettings, EnrichmentSettings)
    } == {7}
    monkeypatch.setenv("ENGRAM_CONSUMER_BATCH_SIZE", "0")
    with pytest.raises(ValidationError):
        MemorySettings()
