"""Passages as enrichment indexes and cites them: the text their vectors are of, the embedded
item that names the exact text, the vector another passage's may stand in for, and the search
result."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.ports import PASSAGE

PATH_SEPARATOR = " > "
HASH_CHARS = 16
CITED = ("document_id", "version", "name", "heading_path", "page", "page_end", "text")


def passage_text(heading_path: Sequence[str], text: str) -> str:
    """The heading path, then the passage: headings carry meaning the passage leaves implicit."""
    if not heading_path:
        return text
    return f"{PATH_SEPARATOR.join(heading_path)}\n\n{text}"


def embedded_sha256(text: str) -> str:
    """The digest of the text a passage's vector is of: equal digests, interchangeable vectors."""
    return hashlib.sha256(text.encode()).hexdigest()


def reusable_digest(payload: Mapping[str, Any], fingerprint: str) -> str | None:
    """The embedded-text digest a stored passage point's vector may be copied for, or None when
    it is not a passage's, names no digest, or another embedder computed it."""
    provenance = payload.get("provenance")
    digest = payload.get("embedded_sha256")
    if (
        payload.get("kind") != PASSAGE
        or not isinstance(digest, str)
        or not isinstance(provenance, Mapping)
        or provenance.get("fingerprint") != fingerprint
    ):
        return None
    return digest


def passage_item_id(passage_id: str, text_sha256: str) -> str:
    """`psg_…:hash`: the computed vector names the exact text it was computed from."""
    return f"{passage_id}:{text_sha256[:HASH_CHARS]}"


def parse_passage_item(item_id: str) -> tuple[str, str]:
    """The passage id and text-hash prefix an embedded item stands for."""
    passage_id, _, digest = item_id.rpartition(":")
    return passage_id, digest


def passage_result(row: PassageRow) -> dict[str, Any]:
    """A passage hit with its citation: document, version, name, heading path, page and span."""
    passage = row.passage
    return {
        "kind": PASSAGE,
        "passage_id": passage.passage_id,
        **{key: getattr(passage, key) for key in CITED},
        "span": {"start": passage.start, "end": passage.end},
        "text_sha256": passage.text_sha256,
    }
