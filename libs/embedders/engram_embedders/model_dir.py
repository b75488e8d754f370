"""Where model files fetched by the dev stack (or put there by an operator) are looked for."""

from __future__ import annotations

import os
from pathlib import Path

from engram_embedders.errors import ModelFilesMissing

MODEL_DIR_ENV = "ENGRAM_MODEL_DIR"
CACHE_DIR_ENV = "ENGRAM_CACHE_DIR"
WEIGHTS_NAME = "model.onnx"
TOKENIZER_NAME = "tokenizer.json"
FETCH_COMMAND = "make models (python -m engram_devstack models)"


def default_model_dir() -> Path:
    """ENGRAM_MODEL_DIR, else ENGRAM_CACHE_DIR/models, else .engram/cache/models under the cwd."""
    if explicit := os.environ.get(MODEL_DIR_ENV):
        return Path(explicit)
    cache = os.environ.get(CACHE_DIR_ENV)
    return (Path(cache) if cache else Path(".engram") / "cache") / "models"


def model_files(name: str, model_dir: Path | str | None = None) -> tuple[Path, Path]:
    """The weights and tokenizer of model `name`, or a ModelFilesMissing naming the fix."""
    directory = (Path(model_dir) if model_dir is not None else default_model_dir()) / name
    weights, tokenizer = directory / WEIGHTS_NAME, directory / TOKENIZER_NAME
    for path in (weights, tokenizer):
        if not path.is_file():
            raise ModelFilesMissing(
                f"{path} is missing; fetch the model files with: {FETCH_COMMAND}"
            )
    return weights, tokenizer
