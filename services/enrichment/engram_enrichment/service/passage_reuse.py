"""Vectors a new version's passages can copy: the same document's passages of another version
whose embedded text has the same digest and whose point was computed by the collection's
embedder. Anything missing (not embedded yet, already withdrawn) is requested instead."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engram_enrichment.domain.passages import reusable_digest
from engram_enrichment.ports import KnowledgeIndex, PassageRows, StoredPassage
from engram_events import Envelope
from engram_events.payloads.passages import PassageUpserted

Copy = tuple[str, str, Sequence[float]]
"""(passage id, its text hash, the vector to store for it)."""


@dataclass
class Donated:
    """The vectors found for some of the passages, and the provenance they were stored with."""

    copies: list[Copy] = field(default_factory=list)
    provenance: dict[str, Any] | None = None


async def donated(
    rows: PassageRows,
    vectors: KnowledgeIndex,
    tenant_id: str,
    events: Sequence[Envelope[PassageUpserted]],
    digests: dict[str, str],
    fingerprint: str,
) -> Donated:
    """One row lookup and one point read per document; a passage of the same version is never
    a donor (a replay of it is simply requested again)."""
    found = Donated()
    by_document: dict[str, list[PassageUpserted]] = defaultdict(list)
    for event in events:
        by_document[event.payload.document_id].append(event.payload)
    for document_id, passages in by_document.items():
        versions = {p.version for p in passages}
        wanted = [digests[p.passage_id] for p in passages]
        candidates = await rows.with_embedded_text(tenant_id, document_id, wanted)
        donors = [r.passage_id for r in candidates if r.passage.version not in versions]
        if not donors:
            continue
        points = await vectors.passage_points(tenant_id, donors)
        by_digest = usable(points, fingerprint)
        for passage in passages:
            point = by_digest.get(digests[passage.passage_id])
            if point is None:
                continue
            found.copies.append((passage.passage_id, passage.text_sha256, point.vector))
            found.provenance = found.provenance or point.payload.get("provenance")
    return found


def usable(points: Sequence[StoredPassage], fingerprint: str) -> dict[str, StoredPassage]:
    """The points whose vectors may be copied, by the digest of the text they are of."""
    by_digest: dict[str, StoredPassage] = {}
    for point in points:
        digest = reusable_digest(point.payload, fingerprint)
        if digest is not None:
            by_digest.setdefault(digest, point)
    return by_digest
