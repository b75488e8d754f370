"""all-MiniLM-L6-v2 on onnxruntime: int8 ONNX weights, HF tokenizers, mean pooling, L2 norm."""

from __future__ import annotations

from pathlib import Path

from engram_embedders.minilm_files import (
    KNOWN_INT8_WEIGHTS_SHA256,
    KNOWN_TOKENIZER_SHA256,
    locate_tokenizer,
    locate_weights,
)
from engram_embedders.onnx_text import ModelPaths, ModelSpec, OnnxTextEmbedder

MINILM_PROVIDER = "sentence-transformers"
MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 256
"""all-MiniLM-L6-v2's own max_seq_length; longer texts are truncated, as upstream does."""

MINILM_SPEC = ModelSpec(
    provider=MINILM_PROVIDER,
    model_id=MINILM_MODEL_ID,
    pooling="mean",
    max_tokens=MINILM_MAX_TOKENS,
    precisions={KNOWN_INT8_WEIGHTS_SHA256: "int8"},
    tokenizer_sha256=KNOWN_TOKENIZER_SHA256,
)


class MiniLMEmbedder(OnnxTextEmbedder):
    """MiniLM from the packaged files unless paths are given; symmetric (no query instruction)."""

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        max_tokens: int = MINILM_MAX_TOKENS,
        weights_path: Path | str | None = None,
        tokenizer_path: Path | str | None = None,
        model_id: str = MINILM_MODEL_ID,
        precision: str | None = None,
    ) -> None:
        super().__init__(
            MINILM_SPEC,
            threads=threads,
            batch_size=batch_size,
            max_tokens=max_tokens,
            model_id=model_id,
            precision=precision,
        )
        self._weights_override = Path(weights_path) if weights_path is not None else None
        self._tokenizer_override = Path(tokenizer_path) if tokenizer_path is not None else None

    def _paths(self) -> ModelPaths:
        return ModelPaths(
            weights=locate_weights(self._weights_override),
            tokenizer=locate_tokenizer(self._tokenizer_override),
            tokenizer_given=self._tokenizer_override is not None,
        )
