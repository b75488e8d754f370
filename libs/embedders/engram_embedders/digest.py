"""Digests of the weights actually used, so provenance never comes from configuration."""

from __future__ import annotations

import hashlib
from pathlib import Path

_CHUNK_BYTES = 1 << 20


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in chunks to bound memory."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()
