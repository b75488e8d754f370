"""all-MiniLM-L6-v2 on onnxruntime: int8 ONNX weights, HF tokenizers, mean pooling, L2 norm."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engram_embedders.digest import sha256_file
from engram_embedders.errors import EmbedderError
from engram_embedders.minilm_files import (
    KNOWN_INT8_WEIGHTS_SHA256,
    KNOWN_TOKENIZER_SHA256,
    locate_tokenizer,
    locate_weights,
)
from engram_embedders.normalize import l2_normalize_rows
from engram_embedders.provenance import Embeddings, FloatMatrix, Provenance
from engram_embedders.validation import validate_texts

MINILM_PROVIDER = "sentence-transformers"
MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_MAX_TOKENS = 256
"""all-MiniLM-L6-v2's own max_seq_length; longer texts are truncated, as upstream does."""

_OUTPUT_NAME = "last_hidden_state"
_PAD_TOKEN = "[PAD]"
_PAD_ID = 0


@dataclass(frozen=True)
class _LoadedModel:
    """What load() produces: the session, the tokenizer and the provenance read from both."""

    session: Any
    tokenizer: Any
    input_names: frozenset[str]
    provenance: Provenance


def _mean_pool(hidden: FloatMatrix, mask: npt.NDArray[np.int64]) -> FloatMatrix:
    """Average token states over the attention mask, as sentence-transformers' Pooling does."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    pooled: FloatMatrix = (summed / counts).astype(np.float32)
    return pooled


class MiniLMEmbedder:
    """Local, offline sentence embeddings; loads on first use or on an explicit load()."""

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
        if threads < 1:
            raise ValueError("threads must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if not 8 <= max_tokens <= 512:
            raise ValueError("max_tokens must be within [8, 512]")
        self._threads = threads
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._weights_override = Path(weights_path) if weights_path is not None else None
        self._tokenizer_override = Path(tokenizer_path) if tokenizer_path is not None else None
        self._model_id = model_id
        self._precision = precision
        self._loaded: _LoadedModel | None = None
        self._load_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-minilm")
        self._model_runs = 0

    @property
    def is_loaded(self) -> bool:
        """Whether the ONNX session exists yet."""
        return self._loaded is not None

    @property
    def model_runs(self) -> int:
        """How many times the ONNX session has been run; lets tests prove validation came first."""
        return self._model_runs

    @property
    def provenance(self) -> Provenance:
        """Provenance read from the loaded files; loads the model if it is not loaded yet."""
        return self.load().provenance

    def load(self) -> _LoadedModel:
        """Hash the weights, open the tokenizer and the ONNX session; idempotent and thread-safe."""
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._load_lock:
            if self._loaded is None:
                self._loaded = self._load_files()
            return self._loaded

    def _load_files(self) -> _LoadedModel:
        """The slow part of load(): imports and file reads happen here, never at import time."""
        import onnxruntime
        from tokenizers import Tokenizer

        weights = locate_weights(self._weights_override)
        tokenizer_file = locate_tokenizer(self._tokenizer_override)
        weights_digest = sha256_file(weights)
        if self._tokenizer_override is None and sha256_file(tokenizer_file) != (
            KNOWN_TOKENIZER_SHA256
        ):
            raise EmbedderError("the packaged MiniLM tokenizer.json does not match its digest")
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.enable_padding(pad_id=_PAD_ID, pad_token=_PAD_TOKEN)
        session = onnxruntime.InferenceSession(
            str(weights),
            sess_options=self._session_options(onnxruntime),
            providers=["CPUExecutionProvider"],
        )
        return _LoadedModel(
            session=session,
            tokenizer=tokenizer,
            input_names=frozenset(node.name for node in session.get_inputs()),
            provenance=Provenance(
                provider=MINILM_PROVIDER,
                model_id=self._model_id,
                weights_sha256=weights_digest,
                dimension=self._output_dimension(session),
                normalized=True,
                precision=self._resolve_precision(weights_digest),
            ),
        )

    def _session_options(self, onnxruntime: Any) -> Any:
        """One inference at a time on `threads` cores, no spinning that would starve neighbours."""
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return options

    @staticmethod
    def _output_dimension(session: Any) -> int:
        """The embedding width as the graph declares it, not as configuration claims."""
        for output in session.get_outputs():
            if output.name == _OUTPUT_NAME:
                width = output.shape[-1]
                if isinstance(width, int) and width > 0:
                    return width
        raise EmbedderError(f"the ONNX graph has no {_OUTPUT_NAME} output with a fixed width")

    def _resolve_precision(self, weights_digest: str) -> str:
        """int8 for the known packaged file; otherwise what the caller declared, or 'unknown'."""
        if self._precision is not None:
            return self._precision
        return "int8" if weights_digest == KNOWN_INT8_WEIGHTS_SHA256 else "unknown"

    def _run_batch(self, model: _LoadedModel, texts: list[str]) -> FloatMatrix:
        """Tokenise, run the graph once and pool one padded batch."""
        encodings = model.tokenizer.encode_batch(texts)
        input_ids = np.asarray([encoding.ids for encoding in encodings], dtype=np.int64)
        attention = np.asarray([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        feeds = {"input_ids": input_ids, "attention_mask": attention}
        if "token_type_ids" in model.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        self._model_runs += 1
        (hidden,) = model.session.run([_OUTPUT_NAME], feeds)
        return _mean_pool(np.asarray(hidden, dtype=np.float32), attention)

    def _embed_validated(self, texts: list[str]) -> Embeddings:
        """Embed already-validated texts in length-sorted batches to keep padding small."""
        model = self.load()
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        pooled = np.empty((len(texts), model.provenance.dimension), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            pooled[chunk] = self._run_batch(model, [texts[index] for index in chunk])
        return Embeddings(vectors=l2_normalize_rows(pooled), provenance=model.provenance)

    def embed_sync(self, texts: Sequence[str]) -> Embeddings:
        """Embed in the calling thread; validation happens before the model is touched."""
        return self._embed_validated(validate_texts(texts))

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Validate on the event loop, then embed on the embedder's single worker thread."""
        checked = validate_texts(texts)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._embed_validated, checked)

    async def aclose(self) -> None:
        """Stop the worker thread and drop the session."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._loaded = None
