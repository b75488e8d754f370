"""API keys: shown once, stored as a salted hash, each bound to one tenant."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

_KEY_RE = re.compile(r"^egk_([0-9a-f]{16})_([A-Za-z0-9_-]{32,64})$")


@dataclass(frozen=True)
class IssuedKey:
    """The plaintext key (returned to the caller once) and what is stored."""

    key_id: str
    plaintext: str
    secret_hash: str
    salt: str


def issue_key() -> IssuedKey:
    """A new random key: `egk_<id>_<secret>`; only the id and a hash are kept."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return IssuedKey(key_id, f"egk_{key_id}_{secret}", hash_secret(secret, salt), salt)


def hash_secret(secret: str, salt: str) -> str:
    """Salted SHA-256; keys are high-entropy, so a slow KDF adds nothing but latency."""
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


def parse_key(presented: str) -> tuple[str, str] | None:
    """Split a presented key into (key_id, secret), or None when it is not shaped like one."""
    match = _KEY_RE.match(presented.strip())
    return (match.group(1), match.group(2)) if match else None


def verify(secret: str, salt: str, expected_hash: str) -> bool:
    """Constant-time comparison."""
    return hmac.compare_digest(hash_secret(secret, salt), expected_hash)


NO_KEY_SALT = "0" * 32
NO_KEY_HASH = "0" * 64
"""What a key id nobody holds is checked against: the same hashing and comparison as a real
key (so the answer's timing does not tell whether the id exists), and no secret hashes to it."""
