"""Enrichment settings (env prefix ENGRAM_ENRICHMENT_)."""

from pathlib import Path

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

from engram_embedders.settings import ReindexSettings
from engram_platform.settings import ServiceSettings, consumer_batch_field
from engram_vectors.settings import CollectionSettings


class EnrichmentSettings(ServiceSettings, ReindexSettings, CollectionSettings):
    """Internal API, schema registry, recall embedder and vectors, summariser."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_ENRICHMENT_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8085, ge=1, le=65535)
    consumer_batch_size: int = consumer_batch_field(
        5000,
        "records per consumer batch; an entity's records in one batch cost one read, one"
        " write and one read-back between them (FerretDB's cost is per document)",
    )
    schema_path: Path | None = Field(
        default=None,
        description=(
            "JSON schema registry: {'multi_valued': {'<record type>' or '*': [attributes]},"
            " 'identity': [attributes that are not facts]}; unset means every attribute is"
            " single-valued and 'id'/'type' are identity"
        ),
    )
    recall: bool = Field(
        default=True, description="embed facts and serve knowledge search (needs the embedder)"
    )
    vector_path: str = ".engram/data/vectors/enrichment"
    collection: str = "knowledge"
    max_top_k: int = Field(default=100, ge=1, le=1000)
    summary_base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint for article summaries; unset turns them off",
    )
    summary_model: str | None = None
    summary_api_key: SecretStr | None = None
    summary_timeout_seconds: float = Field(default=20.0, gt=0, le=300)
    summary_max_tokens: int = Field(default=200, ge=16, le=4096)

    @model_validator(mode="after")
    def _summary_endpoint_and_model(self) -> "EnrichmentSettings":
        """Half a summariser configuration is a mistake to report, not a silent off."""
        if bool(self.summary_base_url) != bool(self.summary_model):
            raise ValueError("set both summary_base_url and summary_model, or neither")
        return self

    @property
    def summaries_enabled(self) -> bool:
        """Summaries need both an endpoint and a model."""
        return bool(self.summary_base_url and self.summary_model)
