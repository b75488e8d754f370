"""Gateway settings (env prefix ENGRAM_GATEWAY_)."""

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from engram_gateway.domain.rate_limits import BULK, READ, WRITE, Policy
from engram_platform.settings import ServiceSettings


class GatewaySettings(ServiceSettings):
    """Where the gateway listens, what it accepts, and where the owning services answer."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_GATEWAY_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    max_document_bytes: int = Field(default=10 * 1024 * 1024, ge=1)
    ingest_url: str = "http://127.0.0.1:8081"
    extraction_url: str = "http://127.0.0.1:8082"
    memory_url: str = "http://127.0.0.1:8084"
    enrichment_url: str = "http://127.0.0.1:8085"
    internal_timeout_seconds: float = Field(default=10.0, gt=0)
    registry_cache_seconds: float = Field(
        default=5.0,
        ge=0,
        description="how long owned agents (and each tenant's quota limits) are remembered "
        "(0: never); an agent deleted through another instance answers here within this time",
    )
    key_cache_seconds: float = Field(
        default=0.5,
        ge=0,
        lt=1,
        description="how long a found API key is remembered (0: never); under a second, so a "
        "key revoked through any gateway instance is refused everywhere within a second",
    )
    quota_memories: int = Field(
        default=1_000_000,
        ge=0,
        description="memories a tenant may write (a tenant row may override)",
    )
    quota_documents: int = Field(
        default=100_000,
        ge=0,
        description="documents a tenant may upload (a tenant row may override)",
    )
    quota_document_bytes: int = Field(
        default=10 * 1024**3,
        ge=0,
        description="bytes of document uploads a tenant may make, every version counted "
        "(a tenant row may override)",
    )
    prune_verify_grace_seconds: float = Field(
        default=60.0, ge=0, description="how long to keep asking a service that does not answer"
    )
    lean_routes: bool = Field(
        default=True,
        description="serve well-formed single memory writes and recalls before FastAPI's "
        "request machinery (the same answers, less CPU); false sends every request to FastAPI",
    )
    rate_limits_enabled: bool = Field(
        default=True, description="limit each tenant's requests per route class (per instance)"
    )
    rate_limit_write_per_second: float = Field(default=500.0, gt=0)
    rate_limit_write_burst: int = Field(default=2_000, ge=1)
    rate_limit_bulk_per_second: float = Field(
        default=5_000.0, gt=0, description="memories a second through memories:batch"
    )
    rate_limit_bulk_burst: int = Field(default=50_000, ge=100)
    rate_limit_read_per_second: float = Field(default=500.0, gt=0)
    rate_limit_read_burst: int = Field(default=2_000, ge=1)

    def rate_limit_defaults(self) -> dict[str, Policy]:
        """Each route class's default policy; a tenant's row may override any of them."""
        return {
            WRITE: Policy(self.rate_limit_write_per_second, self.rate_limit_write_burst),
            BULK: Policy(self.rate_limit_bulk_per_second, self.rate_limit_bulk_burst),
            READ: Policy(self.rate_limit_read_per_second, self.rate_limit_read_burst),
        }
