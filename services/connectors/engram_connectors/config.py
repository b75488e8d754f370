"""Connectors settings (env prefix ENGRAM_CONNECTORS_)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from engram_platform.settings import ServiceSettings

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
"""Documents travel inline and base64 grows them by a third; this stays under Kafka's 16 MiB."""


class ConnectorsSettings(ServiceSettings):
    """File-drop runs when `drop_root` is set; Drive runs when a tenant and a credential are set.

    File-drop: `<drop_root>/<tenant_id>/` is a tenant's inbox — create the sub-folder named by
    the tenant id to connect a tenant (`drop_tenants` optionally restricts which ones).
    """

    model_config = SettingsConfigDict(env_prefix="ENGRAM_CONNECTORS_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8086, ge=1, le=65535)

    drop_root: Path | None = None
    drop_tenants: Annotated[frozenset[str], NoDecode] = frozenset()
    drop_scan_interval_seconds: float = Field(default=1.0, gt=0)
    drop_concurrency: int = Field(default=8, ge=1, le=64)
    drop_max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1, le=11 * 1024 * 1024)

    gdrive_tenant_id: str | None = None
    gdrive_connection: str = Field(default="default", pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    gdrive_service_account_file: Path | None = None
    gdrive_oauth_token: SecretStr | None = None
    gdrive_root_url: str = "https://www.googleapis.com/"
    gdrive_poll_interval_seconds: float = Field(default=30.0, gt=0)
    gdrive_page_size: int = Field(default=100, ge=1, le=1000)
    gdrive_start_page_token: str | None = None
    gdrive_max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1, le=11 * 1024 * 1024)
    gdrive_timeout_seconds: float = Field(default=30.0, gt=0)

    @field_validator("drop_tenants", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        """`a,b,c` in the environment."""
        if isinstance(value, str):
            return frozenset(part.strip() for part in value.split(",") if part.strip())
        return value

    @property
    def drive_enabled(self) -> bool:
        """Drive is off unless a tenant and a credential are configured."""
        has_credential = self.gdrive_service_account_file is not None or (
            self.gdrive_oauth_token is not None and bool(self.gdrive_oauth_token.get_secret_value())
        )
        return bool(self.gdrive_tenant_id) and has_credential
