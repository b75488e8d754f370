"""The events a cause owes, read from the durably written entity (never from intentions)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from engram_enrichment.domain.model import ArticleSection, Entity, Fact, SupportRef, human_edit
from engram_enrichment.domain.sections import SEPARATOR, embedding_text, embedding_texts
from engram_events import Envelope, derive_event_id, new_event
from engram_events.catalog import (
    CONTRADICTION_OPENED,
    CONTRADICTION_RESOLVED,
    EMBEDDING_BULK_REQUESTED,
    FACT_CHANGED,
    FACT_WITHDRAWN,
)
from engram_events.payloads.embeddings import EmbeddingRequested, Purpose, TextItem
from engram_events.payloads.knowledge import (
    Claim,
    ContradictionOpened,
    ContradictionResolved,
    FactChanged,
    FactWithdrawn,
    Support,
)

REQUESTER = "enrichment"
MAX_ITEMS = 512
MAX_TEXT = 32_000
HASH_CHARS = 16


def _support(refs: list[SupportRef]) -> list[Support]:
    return [
        Support(
            record_id=r.record_id,
            revision=r.revision,
            document_id=r.document_id,
            passage_ids=r.passage_ids,
            edit=human_edit(r.edit),
        )
        for r in refs
    ]


def announcements(
    entity: Entity,
    *,
    cause: str,
    caused_by: Envelope[Any] | None = None,
    because_record_id: str | None = None,
    prune_job_id: str | None = None,
) -> list[Envelope[Any]]:
    """fact.changed / fact.withdrawn per fact and contradiction events, with deterministic ids."""
    tenant = entity.tenant_id
    out: list[Envelope[Any]] = []

    def add(event_type: Any, payload: Any, what: str) -> None:
        out.append(
            new_event(
                event_type,
                payload,
                tenant_id=tenant,
                caused_by=caused_by,
                event_id=derive_event_id(cause, what),
            )
        )

    for fid, fact in sorted(entity.facts.items()):
        if fact.last_cause != cause or fact.last_change is None:
            continue
        if fact.status == "withdrawn":
            withdrawn = FactWithdrawn(
                fact_id=fid,
                entity_id=entity.entity_id,
                attribute=fact.attribute,
                because_record_id=because_record_id,
                prune_job_id=prune_job_id,
            )
            add(FACT_WITHDRAWN, withdrawn, f"fact.withdrawn:{fid}")
            continue
        changed = FactChanged(
            fact_id=fid,
            entity_id=entity.entity_id,
            attribute=fact.attribute,
            value=fact.value,
            status=fact.status,
            support=_support(fact.support),
            change=fact.last_change,
        )
        add(FACT_CHANGED, changed, f"fact.changed:{fid}")
    for cid, item in sorted(entity.contradictions.items()):
        if item.opened_by == cause:
            opened = ContradictionOpened(
                contradiction_id=cid,
                entity_id=entity.entity_id,
                attribute=item.attribute,
                claims=[
                    Claim(
                        fact_id=c.fact_id,
                        value=c.value,
                        support=_support(c.support),
                        contested_by=_support(c.contested_by),
                    )
                    for c in item.claims
                ],
            )
            add(CONTRADICTION_OPENED, opened, f"contradiction.opened:{cid}")
        if item.resolved_by == cause and item.resolution is not None:
            resolved = ContradictionResolved(
                contradiction_id=cid,
                entity_id=entity.entity_id,
                attribute=item.attribute,
                winner_fact_id=item.resolution.winner_fact_id,
                superseded_fact_ids=item.resolution.superseded_fact_ids,
                mode=item.resolution.mode,
                reason=item.resolution.reason,
            )
            add(CONTRADICTION_RESOLVED, resolved, f"contradiction.resolved:{cid}")
    return out


def fact_text(entity_id: str, fact: Fact) -> str:
    """What a fact's vectors are of: its entity id, attribute and value (all worth matching)."""
    return f"{entity_id} {fact.attribute}: {fact.value}"


def section_text(entity: Entity, attribute: str, texts: dict[str, str] | None = None) -> str:
    """What a section's vectors are of: its embedding text, cut where the request cuts it."""
    text = (texts or {}).get(attribute) or embedding_text(entity, attribute)
    return text[:MAX_TEXT]


def embedding_request(
    entity: Entity, *, cause: str, caused_by: Envelope[Any] | None = None
) -> list[Envelope[Any]]:
    """Ask the embedding service for vectors of facts this cause made live (not mere support),
    and of a time slice it created already closed (an earlier period arriving late)."""
    items = [
        TextItem(item_id=fid, text=fact_text(entity.entity_id, fact))
        for fid, fact in sorted(entity.facts.items())
        if fact.last_cause == cause
        and (fact.live or (fact.held and fact.last_change == "created"))
        and fact.last_change != "support_changed"
        and fid.count(":") >= 2
    ]
    return _embedding_request(
        entity, items, "fact", ("embed", "embedding.requested"), cause, caused_by
    )


def section_item_id(section: ArticleSection) -> str:
    """`entity@attribute@hash`: the result names the exact text it was computed from."""
    return f"{section.section_id}{SEPARATOR}{(section.text_sha256 or '')[:HASH_CHARS]}"


def parse_section_item(item_id: str) -> tuple[str, str]:
    """The section id and text-hash prefix an embedded item stands for."""
    section, _, digest = item_id.rpartition(SEPARATOR)
    return section, digest


def section_embedding_request(
    entity: Entity,
    sections: list[ArticleSection],
    *,
    cause: str,
    caused_by: Envelope[Any] | None = None,
) -> list[Envelope[Any]]:
    """Ask for vectors of the sections this cause (re)wrote; ids too odd to carry are skipped."""
    items: list[TextItem] = []
    texts = embedding_texts(entity) if sections else {}
    for section in sections:
        text = section_text(entity, section.attribute, texts)
        try:
            items.append(TextItem(item_id=section_item_id(section), text=text))
        except ValidationError:
            continue
    tags = ("embed-sections", "embedding.requested.sections")
    return _embedding_request(entity, items, "article_section", tags, cause, caused_by)


def _embedding_request(
    entity: Entity,
    items: list[TextItem],
    purpose: Purpose,
    tags: tuple[str, str],
    cause: str,
    caused_by: Envelope[Any] | None,
) -> list[Envelope[Any]]:
    """One bulk request for these items' vectors (none for no items), its request and event ids
    derived from the cause and `tags`, so a replayed cause asks again with the same ids."""
    if not items:
        return []
    request_tag, event_tag = tags
    request = EmbeddingRequested(
        request_id=f"enr_{derive_event_id(cause, f'{request_tag}:{entity.entity_id}').hex}",
        requester=REQUESTER,
        purpose=purpose,
        items=items[:MAX_ITEMS],
    )
    return [
        new_event(
            EMBEDDING_BULK_REQUESTED,
            request,
            tenant_id=entity.tenant_id,
            caused_by=caused_by,
            event_id=derive_event_id(cause, f"{event_tag}:{entity.entity_id}"),
        )
    ]


def withdrawn_by(entity: Entity, cause: str) -> list[str]:
    """Facts this cause withdrew (their vectors must go too)."""
    return [
        fid
        for fid, fact in sorted(entity.facts.items())
        if fact.last_cause == cause and fact.status == "withdrawn"
    ]
