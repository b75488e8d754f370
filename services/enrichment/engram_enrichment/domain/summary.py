"""The optional summary: which facts it rests on, what is asked, and when it is stale."""

from __future__ import annotations

import hashlib
import json

from engram_enrichment.domain.article import ordered
from engram_enrichment.domain.model import Entity

MAX_SUMMARY_CHARS = 4_000
INSTRUCTIONS = (
    "Summarise the facts about one entity in at most three sentences. Use only the facts"
    " given; call contested values disputed; never add facts."
)


def _live(entity: Entity) -> list[tuple[str, str]]:
    return [(f.fact_id, f.status) for f in ordered(list(entity.facts.values())) if f.live]


def facts_sha256(entity: Entity) -> str | None:
    """The hash of the live facts (ids carry value hashes) and statuses; None when none live."""
    live = _live(entity)
    if not live:
        return None
    return hashlib.sha256(json.dumps(live).encode()).hexdigest()


def is_current(entity: Entity, digest: str | None) -> bool:
    """A summary stands only while the facts it was generated from are the live ones."""
    return entity.summary is not None and entity.summary.facts_sha256 == digest


def prompt(entity: Entity) -> list[dict[str, str]]:
    """Chat messages: the instructions, then the live facts as `attribute: value (status)`."""
    lines = [
        f"- {fact.attribute}: {json.dumps(fact.value)} ({fact.status})"
        for fact in ordered(list(entity.facts.values()))
        if fact.live
    ]
    content = f"Entity {entity.entity_id} (type {entity.entity_type})\n" + "\n".join(lines)
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": content},
    ]


def clip(text: str) -> str:
    """Generated text is bounded before it is stored."""
    return text.strip()[:MAX_SUMMARY_CHARS]
