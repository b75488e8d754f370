"""Embedding settings (env prefix ENGRAM_EMBEDDING_)."""

from typing import Any

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from engram_embedders.local_models import LOCAL_KINDS
from engram_embedders.settings import EmbedderSettings
from engram_platform.settings import ServiceSettings


class EmbeddingSettings(ServiceSettings, EmbedderSettings):
    """Which embedder runs, with how many threads, and how requests are batched."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_EMBEDDING_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8083, ge=1, le=65535)
    minilm_threads: int = Field(default=1, ge=1, le=2, description="2 cores on the dev machine")
    minilm_own_process: bool = Field(
        default=True, description="run the model in a child process with an interpreter of its own"
    )
    minilm_cpus: frozenset[int] | None = Field(
        default=None, description="CPUs the model's process is pinned to (Linux), e.g. [1]"
    )
    bulk_model_process: bool = Field(
        default=True,
        description="bulk-lane texts go to a second model process, so an interactive request "
        "never waits for a bulk call (it holds another copy of the model, ~100 MB); false for "
        "one model process that both lanes take turns on",
    )
    bulk_model_nice: int = Field(
        default=10,
        ge=0,
        le=19,
        description="how much lower the bulk lane's model process runs (nice): the kernel gives "
        "a core to interactive work first",
    )
    batch_size: int = Field(default=64, ge=1, le=512, description="texts per embedder call")
    bulk_call_chars: int = Field(
        default=1500,
        ge=1,
        le=1_000_000,
        description="characters of text per bulk-lane embedder call: an interactive request "
        "waits for at most one such call (about 0.1 s with MiniLM on one thread)",
    )

    def embedder_options(self) -> dict[str, Any]:
        """Keyword arguments for `make_embedder(self.embedder, ...)`."""
        options = super().embedder_options()
        if self.embedder in LOCAL_KINDS:
            options["batch_size"] = min(self.batch_size, 64)
            if self.minilm_own_process:
                options.update(own_process=True, cpus=self.minilm_cpus)
        return options

    def bulk_embedder_options(self) -> dict[str, Any] | None:
        """Options for the bulk lane's own model process, or None when the bulk lane shares
        the interactive lane's embedder (no local model in a child process, or not wanted)."""
        options = self.embedder_options()
        if not (options.get("own_process") and self.bulk_model_process):
            return None
        return {**options, "nice": self.bulk_model_nice}
