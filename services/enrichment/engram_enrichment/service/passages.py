"""Passages in the knowledge collection: each `passage.upserted` is kept and its embedding
requested; a computed vector is stored only while its passage still holds the text it was
computed from; `passages.withdrawn` deletes rows and vectors, and acknowledges a prune job."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from engram_enrichment.domain.passages import (
    parse_passage_item,
    passage_item_id,
    passage_text,
)
from engram_enrichment.ports import KnowledgeIndex, PassageRows
from engram_enrichment.service.announce import MAX_TEXT, REQUESTER
from engram_events import Envelope, derive_event_id, new_event
from engram_events.acks import tombstone_applied
from engram_events.catalog import EMBEDDING_REQUESTED
from engram_events.payloads.embeddings import EmbeddedItem, EmbeddingRequested, TextItem
from engram_events.payloads.passages import PassagesWithdrawn, PassageUpserted
from engram_vectors import FingerprintMismatch

log = logging.getLogger(__name__)
SERVICE = "enrichment"


class PassageIndexing:
    """Rows first, then the embedding request each input owes."""

    def __init__(self, rows: PassageRows, vectors: KnowledgeIndex | None) -> None:
        self.rows = rows
        self.vectors = vectors

    async def upserted(
        self, events: Sequence[Envelope[PassageUpserted]]
    ) -> list[list[Envelope[Any]] | Exception]:
        """One write per tenant; each input's answer is its embedding request, or why its
        tenant's write failed (retried alone)."""
        results: list[list[Envelope[Any]] | Exception] = [[] for _ in events]
        by_tenant: dict[str, list[int]] = defaultdict(list)
        for i, event in enumerate(events):
            by_tenant[event.tenant_id].append(i)
        for tenant, mine in by_tenant.items():
            try:
                await self.rows.put(tenant, [events[i].payload.model_dump() for i in mine])
            except Exception as exc:
                for i in mine:
                    results[i] = exc
                continue
            for i in mine:
                results[i] = [embedding_request(events[i])]
        log.info("passages kept", extra={"count": len(events), "tenants": len(by_tenant)})
        return results

    async def store(
        self,
        tenant_id: str,
        items: Sequence[EmbeddedItem],
        fingerprint: str,
        provenance: dict[str, Any] | None = None,
    ) -> int:
        """Write vectors of passages that still hold the embedded text; read again after the
        write, so a passage withdrawn meanwhile leaves no vector behind."""
        if self.vectors is None:
            return 0
        wanted = [(*parse_passage_item(item.item_id), item) for item in items]
        before = await self.rows.get_many(tenant_id, [pid for pid, _, _ in wanted])
        current = [
            (before[pid], item)
            for pid, digest, item in wanted
            if pid in before and digest and before[pid]["text_sha256"].startswith(digest)
        ]
        try:
            await self.vectors.put_passages(
                tenant_id,
                [
                    (row, passage_text(row.get("heading_path") or [], row["text"]), item.vector)
                    for row, item in current
                ],
                fingerprint,
                provenance,
            )
        except FingerprintMismatch:
            log.warning("embedder mismatch", extra={"tenant_id": tenant_id, "count": len(current)})
            return 0
        ids = [str(row["passage_id"]) for row, _ in current]
        after = await self.rows.get_many(tenant_id, ids)
        stale = [pid for pid in ids if pid not in after]
        await self.vectors.remove(tenant_id, stale)
        log.info(
            "passage vectors stored",
            extra={"tenant_id": tenant_id, "count": len(ids) - len(stale)},
        )
        return len(ids) - len(stale)

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
        EMBEDDING_REQUESTED,
        request,
        tenant_id=event.tenant_id,
        caused_by=event,
        event_id=derive_event_id(event.event_id, "embedding.requested.passage:enrichment"),
    )
