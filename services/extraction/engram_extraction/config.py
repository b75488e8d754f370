"""Extraction settings (env prefix ENGRAM_EXTRACTION_)."""

from pathlib import Path

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import SettingsConfigDict

from engram_platform.settings import ServiceSettings

DEFAULT_SCHEMAS = Path(__file__).resolve().parent.parent / "schemas" / "default.json"


class ExtractionSettings(ServiceSettings):
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
    llm_base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    llm_model: str | None = Field(default=None, min_length=1, max_length=200, validate_default=True)
    llm_api_key: SecretStr | None = None
    llm_timeout_seconds: float = Field(default=60.0, gt=0)
    llm_max_input_chars: int = Field(default=200_000, ge=1)
    llm_temperature: float | None = Field(default=0.0, ge=0, le=2)

    @field_validator("llm_temperature", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """An empty value omits the temperature (for models that only take their default)."""
        return None if value == "" else value

    @field_validator("llm_model", mode="after")
    @classmethod
    def _llm_whole_or_off(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Half a configuration stops start-up; checked on the model field, so the error's
        input is the model name and never the API key."""
        if (info.data.get("llm_base_url") is None) != (value is None):
            raise ValueError("set both ENGRAM_EXTRACTION_LLM_BASE_URL and _LLM_MODEL, or neither")
        return value

    @property
    def llm_enabled(self) -> bool:
        """Whether documents no built-in extractor reads go to the LLM extractor."""
        return self.llm_base_url is not None and self.llm_model is not None
