"""On a shared Qdrant server, each vector directory a test names becomes a collection of its own.

With the embedded engine a test isolates its vectors by giving a service a directory of its own
(`ENGRAM_<SERVICE>_VECTOR_PATH`), sometimes two in one test (a plain collection beside a lexical
one); with `QDRANT_URL` every process shares one server and the directory is ignored. Naming the
collection after the directory keeps both properties: another directory, another collection; a
restart on the same directory, the same collection.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

VECTOR_PATH = re.compile(r"ENGRAM_(?P<service>[A-Z]+)_VECTOR_PATH")


def collection_for(service: str, path: str) -> str:
    """A collection name that only this service and this directory get."""
    return f"{service.lower()}_{hashlib.sha256(path.encode()).hexdigest()[:16]}"


def with_collection_per_path(env: Mapping[str, str]) -> dict[str, str]:
    """`env` plus `ENGRAM_<SERVICE>_COLLECTION` for each vector directory when QDRANT_URL is set;
    a collection the environment names already is kept, and without QDRANT_URL nothing changes."""
    named = dict(env)
    if not env.get("QDRANT_URL"):
        return named
    for key, path in env.items():
        match = VECTOR_PATH.fullmatch(key)
        if match and path:
            service = match["service"]
            named.setdefault(f"ENGRAM_{service}_COLLECTION", collection_for(service, path))
    return named
