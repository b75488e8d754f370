"""Ingest settings (env prefix ENGRAM_INGEST_)."""

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from engram_platform.settings import ServiceSettings


class IngestSettings(ServiceSettings):
    """Where the internal API listens."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_INGEST_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8081, ge=1, le=65535)
