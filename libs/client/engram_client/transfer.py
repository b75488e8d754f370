"""What the sync and async clients share for a tenant's export and import: the request, and a
tally of the export's lines as they stream by (so a caller can show progress)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from engram_client.errors import Unauthorized

EXPORT_PATH = "/v1/export"
IMPORT_PATH = "/v1/import"
CHUNK_BYTES = 256 * 1024
IMPORT_TIMEOUT = httpx.Timeout(30.0, read=None)
"""The import answers once every memory is queued: the read may take minutes, not the connect."""


@dataclass
class ExportTally:
    """How much of an export has passed: lines, bytes and lines per kind; the checksum line."""

    lines: int = 0
    size: int = 0
    """Bytes so far."""
    kinds: dict[str, int] = field(default_factory=dict)
    checksum: dict[str, Any] | None = None
    _partial: bytes = b""

    def feed(self, chunk: bytes) -> None:
        """Count the complete lines in a chunk (a line cut across chunks counts once whole)."""
        self.size += len(chunk)
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        for line in lines:
            self.lines += 1
            kind = _kind(line)
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
            if kind == "checksum":
                self.checksum = json.loads(line)


def _kind(line: bytes) -> str:
    """A line's `kind`, read cheaply: the format sorts keys, so only its JSON is parsed."""
    try:
        return str(json.loads(line).get("kind", "?"))
    except (ValueError, AttributeError):
        return "?"


ExportProgress = Callable[[ExportTally], None]
ImportProgress = Callable[[int, int], None]
"""Bytes sent so far, and the file's size."""


def headers(api_key: str | None) -> dict[str, str]:
    """The bearer header every transfer sends (these calls bypass `Call`: they stream)."""
    if not api_key:
        raise Unauthorized(
            "no API key configured: set ENGRAM_API_KEY (or pass api_key=)",
            type="/problems/client-no-api-key",
        )
    return {"Authorization": f"Bearer {api_key}"}


def export_params(
    agent_id: str | None, knowledge: bool = True, vectors: bool = False
) -> dict[str, str]:
    """`agent_id` when one agent only is exported; `knowledge=false` leaves documents and
    records out; `vectors=true` adds each memory's stored vector."""
    params = {} if agent_id is None else {"agent_id": agent_id}
    if not knowledge:
        params["knowledge"] = "false"
    if vectors:
        params["vectors"] = "true"
    return params
