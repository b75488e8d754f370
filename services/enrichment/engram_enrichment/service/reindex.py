"""Moving the knowledge store to another embedder in the background: walk every entity's facts
and sections, then every passage, into a new collection (writes meanwhile land in both), catch
up, verify the counts of each kind and a sample, then switch search over."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from engram_embedders.moving import Embedded, JobRecords, Reindexer, same_vector
from engram_embedders.reindex import Reindex, ReindexFailed
from engram_enrichment.domain.passage_rows import PassageRow
from engram_enrichment.domain.passages import passage_text
from engram_enrichment.domain.reindex import (
    ENTITIES,
    PASSAGES,
    Item,
    by_group,
    changed_under,
    item_of,
)
from engram_enrichment.domain.sections import embedding_texts
from engram_enrichment.domain.stored import from_document
from engram_enrichment.ports import (
    ARTICLE_SECTION,
    FACT,
    PASSAGE,
    KnowledgeWalk,
    MovableKnowledge,
)
from engram_enrichment.service.announce import fact_text, section_text
from engram_enrichment.service.moving import MovingKnowledge, embed_into, writer

PAGE = 256
CATCH_UP_MARGIN = timedelta(seconds=60)
"""Entities written within this long of the start are walked again before the switch."""


def key_of(doc: dict[str, Any], id_field: str) -> str:
    """A stored document's `_id`: its tenant, then its own id."""
    return f"{doc['tenant_id']}:{doc[id_field]}"


def entity_items(doc: dict[str, Any]) -> list[Item]:
    """An entity's held facts (live, or closed time slices) and active sections, each with the text its vector is of."""
    entity = from_document(doc)
    key, tenant, entity_id = key_of(doc, "entity_id"), entity.tenant_id, entity.entity_id
    facts = [
        Item(key, tenant, FACT, fact_id, (entity_id, fact_id, fact_text(entity_id, fact), ()))
        for fact_id, fact in sorted(entity.facts.items())
        if fact.held
    ]
    texts = embedding_texts(entity)
    sections = [
        Item(
            key,
            tenant,
            ARTICLE_SECTION,
            section_id,
            (entity_id, section, section_text(entity, section.attribute, texts), ()),
        )
        for section_id, section in sorted(entity.sections.items())
        if section.status == "active"
    ]
    return facts + sections


def passage_key(row: PassageRow) -> str:
    """A stored passage's `_id`: its tenant, then its own id."""
    return f"{row.tenant_id}:{row.passage_id}"


def passage_item(row: PassageRow) -> Item:
    """A passage, with the text its vector is of (heading path and passage)."""
    text = passage_text(row.passage.heading_path, row.passage.text)
    return Item(passage_key(row), row.tenant_id, PASSAGE, row.passage_id, (row, text, ()))


class KnowledgeReindexer(Reindexer[MovableKnowledge, Item]):
    """The knowledge store's walk: items the old collection holds a point for (one whose vector
    is still pending arrives later through a write, which lands in both)."""

    noun = "items"

    def __init__(
        self,
        records: JobRecords,
        documents: KnowledgeWalk,
        moving: MovingKnowledge,
        *,
        page_size: int = PAGE,
        **options: Any,
    ) -> None:
        super().__init__(records, moving, page_size=page_size, **options)
        self.documents = documents

    async def count_total(self) -> int:
        return sum((await self.moving.active.vectors.counts()).values())

    async def next_page(self, job: Reindex) -> tuple[list[Item], Reindex] | None:
        """Entities first, then passages, each in `_id` order after the cursor."""
        if job.phase in (None, ENTITIES):
            job = job if job.phase == ENTITIES else job.entered(ENTITIES)
            docs = await self.documents.entities(job.cursor, self.page_size)
            if docs:
                items = await self._held([i for doc in docs for i in entity_items(doc)])
                return items, job.advanced(key_of(docs[-1], "entity_id"), len(items))
            job = job.entered(PASSAGES)
        rows = await self.documents.passages(job.cursor, self.page_size)
        if not rows:
            return None
        items = await self._held([passage_item(row) for row in rows])
        return items, job.advanced(passage_key(rows[-1]), len(items))

    async def copy(self, target: Embedded[MovableKnowledge], page: Sequence[Item]) -> None:
        """Embed a page into the target, then read its documents again: an item gone meanwhile
        leaves the target, one whose text changed is embedded again as it is now."""
        await self._write(target, page)
        gone, rewritten = changed_under(page, await self._now(page))
        for item in gone:
            await target.vectors.remove(item.tenant_id, [item.item_id])
        await self._write(target, rewritten)

    async def catch_up(self, target: Embedded[MovableKnowledge]) -> None:
        """Entities written around the start, walked again."""
        assert self.job is not None
        since = self.job.started_at - CATCH_UP_MARGIN
        until = self.job.started_at + CATCH_UP_MARGIN
        after: str | None = None
        while docs := await self.documents.entities_updated_between(
            since, until, after, self.page_size
        ):
            await self.copy(target, await self._held([i for d in docs for i in entity_items(d)]))
            after = key_of(docs[-1], "entity_id")

    async def counts(self, target: Embedded[MovableKnowledge]) -> tuple[object, object]:
        return await self.moving.active.vectors.counts(), await target.vectors.counts()

    async def spot_check(self, target: Embedded[MovableKnowledge], sample: Sequence[Item]) -> None:
        """Sampled items still live have a point in the target whose vector is the one the
        target embedder gives their text now."""
        now = await self._now(sample)
        for item in sample:
            current = now.get(item.ref)
            if current is None:
                continue
            point = (await target.vectors.points(item.tenant_id, [item.item_id])).get(item.item_id)
            if point is None:
                raise ReindexFailed(
                    f"{item.kind} {item.item_id} is missing from the new collection"
                )
            if not await same_vector(target.embedder, current.text, point.vector):
                raise ReindexFailed(f"{item.kind} {item.item_id} has a vector of another space")

    async def _held(self, items: Sequence[Item]) -> list[Item]:
        """The items the active collection holds a point for."""
        by_tenant: dict[str, list[Item]] = defaultdict(list)
        for item in items:
            by_tenant[item.tenant_id].append(item)
        held: list[Item] = []
        for tenant, mine in by_tenant.items():
            payloads = await self.moving.active.vectors.payloads(tenant, [i.item_id for i in mine])
            present = {item_of(payload) for payload in payloads}
            held += [item for item in mine if item.item_id in present]
        return held

    async def _now(self, items: Sequence[Item]) -> dict[tuple[str, str], Item]:
        """The items of these items' documents as stored now, by tenant and item id."""
        entity_keys = sorted({i.key for i in items if i.kind != PASSAGE})
        passage_keys = sorted({i.key for i in items if i.kind == PASSAGE})
        entities = await self.documents.entities_by_keys(entity_keys)
        rows = await self.documents.passages_by_keys(passage_keys)
        found = [i for doc in entities.values() for i in entity_items(doc)]
        found += [passage_item(row) for row in rows.values()]
        return {item.ref: item for item in found}

    async def _write(self, target: Embedded[MovableKnowledge], items: Sequence[Item]) -> None:
        for (tenant, kind), group in by_group(items).items():
            await embed_into(target, [item.entry for item in group], writer(kind, tenant))
