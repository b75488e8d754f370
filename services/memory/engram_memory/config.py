"""Memory settings (env prefix ENGRAM_MEMORY_)."""

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from engram_embedders.settings import ReindexSettings
from engram_memory.domain.retention import RetentionPolicy
from engram_platform.chat import ChatModelSettings
from engram_platform.settings import consumer_batch_field
from engram_vectors.ranking import Fusion, FusionSettings
from engram_vectors.settings import CollectionSettings


class MemorySettings(ChatModelSettings, ReindexSettings, CollectionSettings):
    """Embedder (same kind as the embedding service), vector store, limits, retention, and the
    optional conversation model (off unless both `llm_base_url` and `llm_model` are set)."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_MEMORY_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8084, ge=1, le=65535)
    consumer_batch_size: int = consumer_batch_field(
        1000,
        "inputs per consumer batch; a prune brings one input per record and per fact, and each"
        " batch costs its own applied marks, markers, acknowledgement and outbox writes (a"
        " 10k-record prune: 26.2 -> 21.7 s from 100 to 1000)",
    )
    minilm_threads: int = Field(
        default=2,
        ge=1,
        le=2,
        description="this service embeds one recall query at a time: 2 threads take a query "
        "from 10.7 to 5.8 ms here (the embedding service's batches keep 1)",
    )
    embed_single_writes: bool = Field(
        default=True,
        description="embed a single write's content here with the recall embedder and store it"
        " in the same pass (the embedding service still embeds `:batch` writes); false sends"
        " every write through the embedding service and a second pass",
    )
    vector_path: str = ".engram/data/vectors/memory"
    collection: str = "memories"
    fusion: Fusion = Field(
        default="convex", description="how hybrid recall fuses dense and lexical candidates"
    )
    convex_alpha: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="convex fusion's weight of the dense score for a query without identifiers"
        " when the best lexical hit is full evidence (less evidence: more dense weight)",
    )
    identifier_alpha: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="convex fusion's weight of the dense score for a query naming identifiers",
    )
    rrf_k: int = Field(default=60, ge=1, le=1000, description="reciprocal-rank fusion's k")
    max_top_k: int = Field(default=100, ge=1, le=1000)
    retention: list[RetentionPolicy] = Field(
        default_factory=list, description='JSON, e.g. [{"type":"conversation","max_count":100}]'
    )
    llm_candidates: int = Field(
        default=5,
        ge=1,
        le=20,
        description="how many of the agent's most similar memories each fact's decision is shown",
    )
    expiry_sweep_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="how often lapsed memories lose their vectors and are marked `expired`"
        " (recall and listings hide them at once; this bounds how long their points linger)",
    )
    withdraw_requires_all_sources: bool = Field(
        default=False, description="withdraw a memory only when every derived_from source is gone"
    )

    @property
    def fusion_settings(self) -> FusionSettings:
        """How hybrid recall fuses its two candidate lists."""
        return FusionSettings(self.fusion, self.convex_alpha, self.identifier_alpha, self.rrf_k)
