"""Entities and facts as callers see them."""

from __future__ import annotations

from typing import Any

from engram_enrichment.domain.model import Entity, Fact


def fact_view(fact: Fact) -> dict[str, Any]:
    """A fact as callers see it: contested ones always carry their flag."""
    return {
        "fact_id": fact.fact_id,
        "attribute": fact.attribute,
        "value": fact.value,
        "status": fact.status,
        "contested": fact.status == "contested",
        "contradiction_id": fact.contradiction_id,
        "superseded_by": fact.superseded_by,
        "support": [s.shown() for s in fact.support],
        "contested_by": [s.shown() for s in fact.contested_by],
        "valid_from": fact.valid_from,
        "valid_to": fact.valid_to,
        "first_seen": fact.first_seen,
        "last_seen": fact.last_seen,
    }


def entity_view(entity: Entity, include_withdrawn: bool = False) -> dict[str, Any]:
    """The article with the facts it was rendered from."""
    facts = sorted(entity.facts.values(), key=lambda f: (f.attribute, f.fact_id))
    shown = [f for f in facts if include_withdrawn or f.status != "withdrawn"]
    return {
        "entity_id": entity.entity_id,
        "entity_type": entity.entity_type,
        "version": entity.version,
        "article": entity.article,
        "facts": [fact_view(f) for f in shown],
        "withdrawn_count": sum(1 for f in facts if f.status == "withdrawn"),
        "contradictions": [
            {"contradiction_id": c.contradiction_id, "attribute": c.attribute, "status": c.status}
            for c in sorted(entity.contradictions.values(), key=lambda c: c.contradiction_id)
        ],
        "sections": [
            s.model_dump(
                include={"section_id", "attribute", "text_sha256", "fact_ids", "record_ids"}
            )
            for _, s in sorted(entity.sections.items())
            if s.status == "active"
        ],
        "summary": entity.summary.model_dump(mode="json") if entity.summary else None,
    }
