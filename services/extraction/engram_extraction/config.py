"""Extraction settings (env prefix ENGRAM_EXTRACTION_)."""

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from engram_platform.chat import ChatModelSettings

DEFAULT_SCHEMAS = Path(__file__).resolve().parent.parent / "schemas" / "default.json"


class ExtractionSettings(ChatModelSettings):
    """Where the internal API listens, where record types are declared, input limits, and the
    optional LLM extractor (off unless both `llm_base_url` and `llm_model` are set)."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_EXTRACTION_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8082, ge=1, le=65535)
    schema_path: Path = DEFAULT_SCHEMAS
    max_columns: int = Field(default=1000, ge=1)
    max_records: int = Field(default=50_000, ge=1)
    max_value_chars: int = Field(default=32_000, ge=1)
    write_batch: int = Field(default=2000, ge=1)
    llm_max_input_chars: int = Field(default=200_000, ge=1)
