"""Where `make models` put the embedding model files, wherever pytest was started from."""

from __future__ import annotations

import os
from pathlib import Path

from engram_embedders.model_dir import CACHE_DIR_ENV, MODEL_DIR_ENV, default_model_dir

ROOT = Path(__file__).resolve().parents[2]


def model_dir() -> Path:
    """The env's choice if it makes one, else the checkout's .engram/cache/models."""
    if os.environ.get(MODEL_DIR_ENV) or os.environ.get(CACHE_DIR_ENV):
        return default_model_dir()
    return ROOT / ".engram" / "cache" / "models"
