"""bge-small-en-v1.5 on onnxruntime: CLS pooling, L2 norm, an instruction on queries only."""

from __future__ import annotations

from pathlib import Path

from engram_embedders.model_dir import model_files
from engram_embedders.onnx_text import ModelPaths, ModelSpec, OnnxTextEmbedder

BGE_SMALL_PROVIDER = "BAAI"
BGE_SMALL_MODEL_ID = "BAAI/bge-small-en-v1.5"
BGE_SMALL_MAX_TOKENS = 512
"""bge-small-en-v1.5's own max_seq_length."""
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
"""The retrieval instruction the model card asks for on short queries, never on passages."""

BGE_SMALL_INT8 = "bge-small-en-v1.5-int8"
BGE_SMALL_FP32 = "bge-small-en-v1.5-fp32"
KNOWN_INT8_WEIGHTS_SHA256 = "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4"
"""The dynamically quantized ONNX file (LangChain4j's bge-small-en-v15-q 1.11.0-beta19)."""
KNOWN_FP32_WEIGHTS_SHA256 = "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35"
KNOWN_TOKENIZER_SHA256 = "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"

BGE_SMALL_SPEC = ModelSpec(
    provider=BGE_SMALL_PROVIDER,
    model_id=BGE_SMALL_MODEL_ID,
    pooling="cls",
    max_tokens=BGE_SMALL_MAX_TOKENS,
    query_prefix=BGE_QUERY_PREFIX,
    precisions={KNOWN_INT8_WEIGHTS_SHA256: "int8", KNOWN_FP32_WEIGHTS_SHA256: "fp32"},
    tokenizer_sha256s=frozenset({KNOWN_TOKENIZER_SHA256}),
)


class BgeSmallEmbedder(OnnxTextEmbedder):
    """bge-small from `<model_dir>/<variant>/`; the int8 file unless another variant is named."""

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        max_tokens: int = BGE_SMALL_MAX_TOKENS,
        model_dir: Path | str | None = None,
        variant: str = BGE_SMALL_INT8,
    ) -> None:
        super().__init__(
            BGE_SMALL_SPEC, threads=threads, batch_size=batch_size, max_tokens=max_tokens
        )
        self._model_dir = model_dir
        self._variant = variant

    def _paths(self) -> ModelPaths:
        weights, tokenizer = model_files(self._variant, self._model_dir)
        return ModelPaths(weights=weights, tokenizer=tokenizer, tokenizer_given=False)
