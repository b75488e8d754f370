"""Checking that submitted bytes are what the submitter said they are."""

from __future__ import annotations

import base64
import binascii
import hashlib

from engram_platform.retry import PermanentError


def decode_content(content_base64: str, declared_sha256: str, declared_size: int) -> bytes:
    """The document bytes, or a permanent error when they do not match their declaration."""
    try:
        content = base64.b64decode(content_base64, validate=True)
    except (binascii.Error, ValueError):
        raise PermanentError("content_base64 is not valid base64") from None
    if len(content) != declared_size:
        raise PermanentError(f"size mismatch: declared {declared_size}, got {len(content)}")
    if hashlib.sha256(content).hexdigest() != declared_sha256:
        raise PermanentError("content_sha256 does not match the content")
    return content
