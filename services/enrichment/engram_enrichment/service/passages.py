"""Passages in the knowledge collection: each `passage.upserted` is kept, and given the vector of
the same document's passage of the same embedded text when one is stored (a new version
re-embeds only what changed), else its embedding is requested; a vector is stored only while
its passage still holds the text it was computed from; `passages.withdrawn` deletes rows and
vectors, and acknowledges a prune job."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from opentelemetry import metrics

from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.domain.passages import (
    embedded_sha256,
    parse_passage_item,
    passage_item_id,
    passage_text,
)
from engram_enrichment.ports import KnowledgeIndex, PassageRows
from engram_enrichment.service.announce import MAX_TEXT, REQUESTER
from engram_enrichment.service.passage_reuse import Copy, donated
from engram_events import Envelope, derive_event_id, new_event
from engram_events.acks import tombstone_applied
from engram_events.catalog import EMBEDDING_BULK_REQUESTED
from engram_events.payloads.embeddings import EmbeddedItem, EmbeddingRequested, TextItem
from engram_events.payloads.passages import PassagesWithdrawn, PassageUpserted
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)
SERVICE = "enrichment"
PASSAGE_VECTORS = "engram.enrichment.passage_vectors"


class PassageIndexing:
    """Rows first, then the embedding request each input owes."""

    def __init__(self, rows: PassageRows, vectors: KnowledgeIndex | None) -> None:
        self.rows = rows
        self.vectors = vectors
        self.counts: Counter[str] = Counter()
        self._counter = metrics.get_meter("engram").create_counter(
            PASSAGE_VECTORS,
            unit="{passage}",
            description="upserted passages by how their vector comes: reused or requested",
        )

    async def upserted(
        self, events: Sequence[Envelope[PassageUpserted]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """One write per tenant; each input's answer is nothing when a vector of its text was
        copied, else its embedding request, or why its tenant's write failed (retried alone)."""
        results: list[list[Envelope[Any]] | Exception] = [[] for _ in events]
        by_tenant: dict[str, list[int]] = defaultdict(list)
        for i, event in enumerate(events):
            by_tenant[event.tenant_id].append(i)
        digests = {e.payload.passage_id: embedded_digest(e.payload) for e in events}
        reused = requested = 0
        for tenant, mine in by_tenant.items():
            try:
                await self.rows.put([kept(events[i], digests) for i in mine])
                copied = await self._reuse(tenant, [events[i] for i in mine], digests)
            except Exception as exc:
                for i in mine:
                    results[i] = exc
                continue
            for i in mine:
                if events[i].payload.passage_id in copied:
                    reused += 1
                else:
                    results[i] = [embedding_request(events[i])]
                    requested += 1
        self._count(reused=reused, requested=requested)
        log.info(
            "passages kept",
            extra={
                "count": len(events),
                "tenants": len(by_tenant),
                "reused": reused,
                "requested": requested,
            },
        )
        return results

    def _count(self, *, reused: int, requested: int) -> None:
        for outcome, n in (("reused", reused), ("requested", requested)):
            if n:
                self.counts[outcome] += n
                self._counter.add(n, {"outcome": outcome})

    async def _reuse(
        self,
        tenant_id: str,
        events: Sequence[Envelope[PassageUpserted]],
        digests: dict[str, str],
    ) -> set[str]:
        """The passages given a copy of a stored vector of their embedded text."""
        if self.vectors is None:
            return set()
        fingerprint = await self.vectors.fingerprint()
        found = await donated(self.rows, self.vectors, tenant_id, events, digests, fingerprint)
        if not found.copies:
            return set()
        return set(await self._put(tenant_id, found.copies, fingerprint, found.provenance))

    async def store(
        self,
        tenant_id: str,
        items: Sequence[EmbeddedItem],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> int:
        """Write computed vectors of passages that still hold the embedded text."""
        wanted = [(*parse_passage_item(item.item_id), item.vector) for item in items]
        return len(await self._put(tenant_id, wanted, fingerprint, provenance))

    async def _put(
        self,
        tenant_id: str,
        wanted: Sequence[Copy],
        fingerprint: str,
        provenance: dict[str, Any] | None,
    ) -> list[str]:
        """Write vectors `(passage id, text hash or its prefix, vector)` of passages that still
        hold that text; read again after the write, so a passage withdrawn meanwhile leaves no
        vector behind. Returns the passages that kept their vector."""
        if self.vectors is None:
            return []
        before = await self.rows.get_many(tenant_id, [pid for pid, _, _ in wanted])
        current = [
            (before[pid], vector)
            for pid, digest, vector in wanted
            if pid in before and digest and before[pid].passage.text_sha256.startswith(digest)
        ]
        try:
            await self.vectors.put_passages(
                tenant_id,
                [point_of(row, vector) for row, vector in current],
                fingerprint,
                provenance,
            )
        except FingerprintMismatch:
            log.warning("embedder mismatch", extra={"tenant_id": tenant_id, "count": len(current)})
            return []
        ids = [row.passage_id for row, _ in current]
        after = await self.rows.get_many(tenant_id, ids)
        stale = [pid for pid in ids if pid not in after]
        await self.vectors.remove(tenant_id, stale)
        log.info(
            "passage vectors stored",
            extra={"tenant_id": tenant_id, "count": len(ids) - len(stale)},
        )
        return [pid for pid in ids if pid in after]

    async def withdrawn(self, event: Envelope[PassagesWithdrawn]) -> list[Envelope[Any]]:
        """Vectors first, then rows (a vector computed meanwhile finds no row and is dropped);
        a deleted document's points go by its id too. A prune job is acknowledged for the
        document."""
        gone = event.payload
        if self.vectors is not None:
            await self.vectors.remove(event.tenant_id, gone.passage_ids)
            if gone.reason == "document_deleted":
                await self.vectors.remove_passages_of(event.tenant_id, gone.document_id)
        await self.rows.remove(event.tenant_id, gone.passage_ids)
        log.info(
            "passages withdrawn",
            extra={
                "tenant_id": event.tenant_id,
                "document_id": gone.document_id,
                "count": len(gone.passage_ids),
                "prune_job_id": gone.prune_job_id,
            },
        )
        if gone.prune_job_id is None:
            return []
        return [
            tombstone_applied(
                event,
                prune_job_id=gone.prune_job_id,
                service=SERVICE,
                counts={"vectors": len(gone.passage_ids)},
                source_ids=[gone.document_id],
                tombstoned_ids=[],
            )
        ]


def embedded_digest(passage: PassageUpserted) -> str:
    """The digest of the text a passage's vector is of."""
    return embedded_sha256(passage_text(passage.heading_path, passage.text))


def kept(event: Envelope[PassageUpserted], digests: dict[str, str]) -> PassageRow:
    """The row of a passage: as announced, with the digest a later version looks it up by."""
    passage = event.payload
    return PassageRow(event.tenant_id, passage, digests[passage.passage_id])


def point_of(row: PassageRow, vector: Sequence[float]) -> tuple[PassageRow, str, Sequence[float]]:
    """A passage's point: its row, named by the digest of the text embedded, that text, the
    vector."""
    text = passage_text(row.passage.heading_path, row.passage.text)
    return replace(row, embedded_sha256=embedded_sha256(text)), text, vector


def embedding_request(event: Envelope[PassageUpserted]) -> Envelope[Any]:
    """Ask for the vector of a passage's heading path and text, named by its hash."""
    passage = event.payload
    request = EmbeddingRequested(
        request_id=f"enr_{derive_event_id(passage.passage_id, 'embed-passage').hex}",
        requester=REQUESTER,
        purpose="passage",
        items=[
            TextItem(
                item_id=passage_item_id(passage.passage_id, passage.text_sha256),
                text=passage_text(passage.heading_path, passage.text)[:MAX_TEXT],
            )
        ],
    )
    return new_event(
        EMBEDDING_BULK_REQUESTED,
        request,
        tenant_id=event.tenant_id,
        caused_by=event,
        event_id=derive_event_id(event.event_id, "embedding.requested.passage:enrichment"),
    )
