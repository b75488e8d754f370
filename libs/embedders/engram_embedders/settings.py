"""The embedder settings every service that embeds reads, each under its own env prefix."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engram_embedders.factory import EmbedderKind


class EmbedderSettings(BaseModel):
    """Which embedder a service runs and its options; mixed into the service's `Settings`."""

    embedder: EmbedderKind = "minilm"
    minilm_threads: int = Field(default=1, ge=1, le=2)
    hashing_dimension: int = Field(default=384, ge=2)
    openai_base_url: str | None = None
    openai_model: str | None = None

    def embedder_options(self) -> dict[str, Any]:
        """Keyword arguments for `make_embedder(self.embedder, ...)`."""
        if self.embedder == "minilm":
            return {"threads": self.minilm_threads}
        if self.embedder == "hashing":
            return {"dimension": self.hashing_dimension}
        return {"base_url": self.openai_base_url, "model": self.openai_model}
