"""The tenant export's NDJSON: a manifest first, one object per line, a sha256 last (pure).

Every line is a JSON object with `kind` and `v` (the format's version). The first is the
manifest (tenant, counts expected when the export began); then agents, their retention rules
and their memories (with `created_at`; with `vector` and `vector_provenance` in an export
asked `?vectors=true`); then the knowledge: the tenant's own record types (`record_type`: name
and definition, as `PUT /v1/schema/types/{name}` takes it; the bundled ones travel with the
deployment), each `document` (its metadata:
ids, name, versions and status, never its bytes) before the first `record` it holds, and
every live `record` (type, entity, attributes, revision, source item and lineage; a curator's
carries its `edit`); the last is the checksum: the sha256 of every byte before it and the
counts actually written, so a truncated or altered file is refused before anything is imported.

A reader of this version refuses a kind it does not know, so a file of a later one is never
half-read.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

FORMAT = "engram-export"
VERSION = 1
MANIFEST = "manifest"
CHECKSUM = "checksum"
BODY_KINDS = ("agent", "retention", "memory", "record_type", "document", "record")
MAX_LINE_BYTES = 1024 * 1024
"""A memory is at most 64k characters; a line this long is not one this format writes."""


class ExportRefused(ValueError):
    """An export file that cannot be imported: what is wrong, and on which line."""

    def __init__(self, detail: str, line: int | None = None) -> None:
        super().__init__(detail if line is None else f"line {line}: {detail}")
        self.detail = detail
        self.line = line


def encode(kind: str, fields: Mapping[str, Any]) -> bytes:
    """One line of the format (compact JSON, keys sorted, newline-terminated)."""
    body = {**fields, "kind": kind, "v": VERSION}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode() + b"\n"


def manifest(
    tenant_id: str, exported_at: str, counts: Mapping[str, int], *, vectors: bool = False
) -> bytes:
    """The first line: what the file holds, how many of each kind were expected, and whether
    memories carry their stored vectors."""
    return encode(
        MANIFEST,
        {
            "format": FORMAT,
            "tenant_id": tenant_id,
            "exported_at": exported_at,
            "counts": dict(counts),
            "vectors": vectors,
        },
    )


class Writer:
    """Hashes and counts the lines it encodes, then writes the checksum line."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.counts: Counter[str] = Counter()

    def line(self, kind: str, fields: Mapping[str, Any]) -> bytes:
        """A body line, hashed and counted."""
        return self.raw(encode(kind, fields), kind)

    def raw(self, encoded: bytes, kind: str) -> bytes:
        """An already encoded line (the manifest), hashed and counted."""
        self.sha.update(encoded)
        self.counts[kind] += 1
        return encoded

    def checksum(self) -> bytes:
        """The last line: the sha256 of every line before it, and how many of each kind."""
        counts = {kind: self.counts[kind] for kind in BODY_KINDS}
        return encode(CHECKSUM, {"sha256": self.sha.hexdigest(), "counts": counts})


class Reader:
    """Checks lines as they arrive: the manifest first, known kinds of this version, and the
    checksum last and matching; `finish` refuses a file that stopped early."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()
        self.counts: Counter[str] = Counter()
        self.number = 0
        self.head: dict[str, Any] | None = None
        self.closed = False

    def feed(self, raw: bytes) -> dict[str, Any]:
        """One line (with or without its newline), parsed and checked; raises ExportRefused."""
        self.number += 1
        if self.closed:
            raise ExportRefused("content after the checksum line", self.number)
        if len(raw) > MAX_LINE_BYTES:
            raise ExportRefused(f"longer than {MAX_LINE_BYTES} bytes", self.number)
        item = self._parsed(raw)
        kind = item["kind"]
        if self.head is None:
            self._check_manifest(item)
            self.head = item
        elif kind == CHECKSUM:
            self._check_sum(item)
            self.closed = True
            return item
        elif kind not in BODY_KINDS:
            raise ExportRefused(f"unknown kind {kind!r}", self.number)
        self.sha.update(raw if raw.endswith(b"\n") else raw + b"\n")
        self.counts[kind] += 1
        return item

    def finish(self) -> dict[str, Any]:
        """The manifest, once the whole file has been read and its checksum matched."""
        if self.head is None:
            raise ExportRefused("the file is empty: no manifest line")
        if not self.closed:
            raise ExportRefused("the file ends without its checksum line (truncated?)")
        return self.head

    def _parsed(self, raw: bytes) -> dict[str, Any]:
        try:
            item = json.loads(raw)
        except ValueError:
            raise ExportRefused("not a JSON object", self.number) from None
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            raise ExportRefused("not a JSON object with a `kind`", self.number)
        if item.get("v") != VERSION:
            raise ExportRefused(
                f"format version {item.get('v')!r} is not supported (this deployment reads "
                f"version {VERSION})",
                self.number,
            )
        return item

    def _check_manifest(self, item: dict[str, Any]) -> None:
        if item["kind"] != MANIFEST:
            raise ExportRefused(f"the first line must be the manifest, not {item['kind']!r}", 1)
        if item.get("format") != FORMAT:
            raise ExportRefused(f"not an {FORMAT} file (format {item.get('format')!r})", 1)
        if not isinstance(item.get("tenant_id"), str):
            raise ExportRefused("the manifest names no tenant_id", 1)

    def _check_sum(self, item: dict[str, Any]) -> None:
        if item.get("sha256") != self.sha.hexdigest():
            raise ExportRefused(
                "checksum mismatch: the lines before it are not the ones exported", self.number
            )
        said = item.get("counts")
        if not isinstance(said, dict):
            raise ExportRefused("the checksum line's counts are not an object", self.number)
        for kind in BODY_KINDS:
            if said.get(kind, 0) != self.counts[kind]:
                raise ExportRefused(
                    f"the checksum line counts {said.get(kind, 0)} {kind} lines, the file "
                    f"holds {self.counts[kind]}",
                    self.number,
                )
