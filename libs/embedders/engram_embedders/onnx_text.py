"""A BERT-style sentence encoder on onnxruntime, shared by MiniLM and bge-small.

What differs between models (pooling, query instruction, token limit, known files) is a
`ModelSpec`; loading, batching, threading and provenance are the same code.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from engram_embedders.digest import sha256_file
from engram_embedders.errors import EmbedderError
from engram_embedders.normalize import l2_normalize_rows
from engram_embedders.provenance import Embeddings, FloatMatrix, Provenance
from engram_embedders.validation import validate_texts

Pooling = Literal["mean", "cls"]

_OUTPUT_NAME = "last_hidden_state"
_PAD_TOKEN = "[PAD]"
_PAD_ID = 0


@dataclass(frozen=True)
class ModelSpec:
    """How a model must be run to give the vectors it was trained to give."""

    provider: str
    model_id: str
    pooling: Pooling
    max_tokens: int
    query_prefix: str = ""
    precisions: Mapping[str, str] = field(default_factory=dict)
    """Known weights digests and their precision; any other file is 'unknown' unless declared."""
    tokenizer_sha256s: frozenset[str] = frozenset()
    """When set, a tokenizer found by default (not given by path) must hash to one of them."""


@dataclass(frozen=True)
class ModelPaths:
    """The two files a model loads, and whether the tokenizer was chosen by the caller."""

    weights: Path
    tokenizer: Path
    tokenizer_given: bool


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


def _cls_pool(hidden: FloatMatrix) -> FloatMatrix:
    """The [CLS] token's state, which bge models are trained to use as the sentence vector."""
    pooled: FloatMatrix = np.ascontiguousarray(hidden[:, 0, :], dtype=np.float32)
    return pooled


class OnnxTextEmbedder:
    """Local, offline sentence embeddings; loads on first use or on an explicit load()."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        threads: int = 1,
        batch_size: int = 32,
        max_tokens: int | None = None,
        model_id: str | None = None,
        precision: str | None = None,
    ) -> None:
        limit = spec.max_tokens if max_tokens is None else max_tokens
        if threads < 1:
            raise ValueError("threads must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if not 8 <= limit <= 512:
            raise ValueError("max_tokens must be within [8, 512]")
        self._spec = spec
        self._threads = threads
        self._batch_size = batch_size
        self._max_tokens = limit
        self._model_id = model_id or spec.model_id
        self._precision = precision
        self._loaded: _LoadedModel | None = None
        self._load_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-onnx")
        self._model_runs = 0

    def _paths(self) -> ModelPaths:
        """Where this model's files are; subclasses know their defaults."""
        raise NotImplementedError

    @property
    def is_loaded(self) -> bool:
        """Whether the ONNX session exists yet."""
        return self._loaded is not None

    @property
    def model_runs(self) -> int:
        """How many times the ONNX session has been run; lets tests prove validation came first."""
        return self._model_runs

    @property
    def query_prefix(self) -> str:
        """The instruction prepended to search queries (empty for symmetric models)."""
        return self._spec.query_prefix

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

        paths = self._paths()
        weights_digest = sha256_file(paths.weights)
        expected = self._spec.tokenizer_sha256s
        if not paths.tokenizer_given and expected:
            if sha256_file(paths.tokenizer) not in expected:
                raise EmbedderError(f"{paths.tokenizer} does not match its pinned digest")
        tokenizer = Tokenizer.from_file(str(paths.tokenizer))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self._max_tokens)
        tokenizer.enable_padding(pad_id=_PAD_ID, pad_token=_PAD_TOKEN)
        session = onnxruntime.InferenceSession(
            str(paths.weights),
            sess_options=self._session_options(onnxruntime),
            providers=["CPUExecutionProvider"],
        )
        return _LoadedModel(
            session=session,
            tokenizer=tokenizer,
            input_names=frozenset(node.name for node in session.get_inputs()),
            provenance=Provenance(
                provider=self._spec.provider,
                model_id=self._model_id,
                weights_sha256=weights_digest,
                dimension=self._output_dimension(session),
                normalized=True,
                precision=self._precision or self._spec.precisions.get(weights_digest, "unknown"),
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
        states = np.asarray(hidden, dtype=np.float32)
        if self._spec.pooling == "cls":
            return _cls_pool(states)
        return _mean_pool(states, attention)

    def _embed_validated(self, texts: list[str]) -> Embeddings:
        """Embed already-validated texts in length-sorted batches to keep padding small."""
        model = self.load()
        order = sorted(range(len(texts)), key=lambda index: len(texts[index]))
        pooled = np.empty((len(texts), model.provenance.dimension), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            pooled[chunk] = self._run_batch(model, [texts[index] for index in chunk])
        return Embeddings(vectors=l2_normalize_rows(pooled), provenance=model.provenance)

    def _as_queries(self, texts: list[str]) -> list[str]:
        """Prepend the model's query instruction, if it has one."""
        prefix = self._spec.query_prefix
        return [prefix + text for text in texts] if prefix else texts

    def embed_sync(self, texts: Sequence[str], *, queries: bool = False) -> Embeddings:
        """Embed in the calling thread; validation happens before the model is touched."""
        checked = validate_texts(texts)
        return self._embed_validated(self._as_queries(checked) if queries else checked)

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Validate on the event loop, then embed on the embedder's single worker thread."""
        checked = validate_texts(texts)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._embed_validated, checked)

    async def embed_queries(self, texts: Sequence[str]) -> Embeddings:
        """Like embed(), with the model's query instruction in front of each text."""
        checked = self._as_queries(validate_texts(texts))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._embed_validated, checked)

    async def aclose(self) -> None:
        """Stop the worker thread and drop the session."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._loaded = None
