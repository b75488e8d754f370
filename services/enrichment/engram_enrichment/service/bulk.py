"""Many changes at once: each entity is loaded, written and read back once per batch.

Steps on one entity are applied in order to the in-memory aggregate, each stamped with its own
cause, and what each step owes is read from the state right after it (so a step announces what
it would have announced alone). Nothing is owed until the entity's one write reads back as
written; a conflict or an unconfirmed write fails only the steps on that entity.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram_enrichment.domain.article import render
from engram_enrichment.domain.changes import snapshot, stamp
from engram_enrichment.domain.model import Entity
from engram_enrichment.domain.sections import refresh_sections
from engram_enrichment.domain.stored import from_document, to_document
from engram_enrichment.ports import ConcurrentUpdate
from engram_enrichment.service.knowledge import (
    KnowledgeBase,
    Mutation,
    NotApplied,
    contradiction_docs,
)
from engram_events import Envelope

log = logging.getLogger(__name__)
Key = tuple[str, str]


@dataclass
class Owed:
    """What one step announces, and the vector ids it made obsolete."""

    events: list[Envelope[Any]]
    gone_vectors: list[str] = field(default_factory=list)


@dataclass
class Step:
    """One input's change to one entity."""

    tenant_id: str
    entity_id: str
    entity_type: str
    mutate: Mutation
    cause: str
    at: datetime
    owes: Callable[[Entity], Owed]


@dataclass
class _Plan:
    """One entity's batch: the state after every step, and the write it needs (if any)."""

    entity: Entity
    owed: list[Owed]
    causes: set[str]
    intended: dict[str, Any] | None = None
    expected_version: int = 0


async def _plan(knowledge: KnowledgeBase, doc: dict[str, Any] | None, steps: list[Step]) -> _Plan:
    """Apply the steps in order, as `KnowledgeBase.change` would one after another."""
    first = steps[0]
    current = (
        from_document(doc)
        if doc
        else Entity(
            tenant_id=first.tenant_id, entity_id=first.entity_id, entity_type=first.entity_type
        )
    )
    original = (current.version, current.state()) if doc else None
    owed: list[Owed] = []
    for step in steps:
        before = snapshot(current)
        step.mutate(current)
        changed = stamp(before, current, cause=step.cause, at=step.at)
        attributes = {current.facts[fid].attribute for fid in changed}
        refresh_sections(current, step.cause, attributes)
        owed.append(step.owes(current))
    await knowledge.summaries.refresh(current)
    current.article = render(current)
    plan = _Plan(entity=current, owed=owed, causes={s.cause for s in steps})
    state = current.state()
    if original is None or original[1] != state:
        plan.expected_version = original[0] if original else 0
        current.version = plan.expected_version + 1
        plan.intended = to_document(current, {**state, "version": current.version})
    return plan


def _by_tenant(keys: Sequence[Key]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for tenant, entity_id in keys:
        grouped[tenant].append(entity_id)
    return grouped


async def change_many(
    knowledge: KnowledgeBase,
    steps: Sequence[Step],
    loaded: dict[Key, dict[str, Any]] | None = None,
) -> list[Owed | Exception]:
    """Per step, what it owes once its entity is durably written, or why it is not.

    `loaded` holds documents the caller has just read (the versioned write still refuses one
    that changed since); entities missing from it are read here.
    """
    indexes: dict[Key, list[int]] = defaultdict(list)
    position: list[int] = []
    for i, step in enumerate(steps):
        key = (step.tenant_id, step.entity_id)
        position.append(len(indexes[key]))
        indexes[key].append(i)
    failed: dict[Key, Exception] = {}
    plans: dict[Key, _Plan] = {}
    for tenant, entity_ids in _by_tenant(list(indexes)).items():
        known = loaded or {}
        missing = [e for e in entity_ids if (tenant, e) not in known]
        docs = await knowledge.store.load_many(tenant, missing) if missing else {}
        docs.update({e: known[(tenant, e)] for e in entity_ids if (tenant, e) in known})
        for entity_id in entity_ids:
            key = (tenant, entity_id)
            try:
                plans[key] = await _plan(
                    knowledge, docs.get(entity_id), [steps[i] for i in indexes[key]]
                )
            except Exception as exc:
                failed[key] = exc
    await _write(knowledge, plans, failed)
    await _index(knowledge, plans, failed)
    results: list[Owed | Exception] = []
    for i, step in enumerate(steps):
        key = (step.tenant_id, step.entity_id)
        if key in failed:
            results.append(failed[key])
        else:
            results.append(plans[key].owed[position[i]])
    return results


async def _write(
    knowledge: KnowledgeBase, plans: dict[Key, _Plan], failed: dict[Key, Exception]
) -> None:
    """One versioned write per changed entity, then one read-back of all of them."""
    writes = {k: p for k, p in plans.items() if p.intended is not None and k not in failed}
    for tenant, entity_ids in _by_tenant(list(writes)).items():
        batch = [
            (writes[(tenant, e)].intended or {}, writes[(tenant, e)].expected_version)
            for e in entity_ids
        ]
        try:
            conflicts = await knowledge.store.save_many(tenant, batch)
            for entity_id in conflicts:
                failed[(tenant, entity_id)] = ConcurrentUpdate(f"{tenant}:{entity_id}")
            written = {
                e: writes[(tenant, e)].intended or {} for e in entity_ids if e not in conflicts
            }
            missing = await knowledge.store.unconfirmed_many(tenant, written)
        except Exception as exc:
            for entity_id in entity_ids:
                failed.setdefault((tenant, entity_id), exc)
            continue
        for entity_id in written:
            lost = missing.get(entity_id, ["entity"])
            if lost:
                log.warning(
                    "entity write not confirmed",
                    extra={
                        "tenant_id": tenant,
                        "entity_id": entity_id,
                        "failed_count": len(lost),
                    },
                )
                total = len(writes[(tenant, entity_id)].entity.facts)
                failed[(tenant, entity_id)] = NotApplied(f"{tenant}:{entity_id}", lost, total)


async def _index(
    knowledge: KnowledgeBase, plans: dict[Key, _Plan], failed: dict[Key, Exception]
) -> None:
    """Refresh the listing copies of contradictions the batch touched, per tenant in one call."""
    touched: dict[str, dict[Key, list[dict[str, Any]]]] = defaultdict(dict)
    for key, plan in plans.items():
        docs = contradiction_docs(plan.entity, plan.causes)
        if docs and key not in failed:
            touched[key[0]][key] = docs
    for tenant, by_entity in touched.items():
        try:
            await knowledge.store.index_contradictions(
                tenant, [doc for docs in by_entity.values() for doc in docs]
            )
        except Exception as exc:
            for key in by_entity:
                failed[key] = exc
    related: dict[str, dict[Key, tuple[Entity, set[str]]]] = defaultdict(dict)
    for key, plan in plans.items():
        if key not in failed and any(f.relation is not None for f in plan.entity.facts.values()):
            related[key[0]][key] = (plan.entity, plan.causes)
    for tenant, by_key in related.items():
        try:
            await knowledge.index_relations(tenant, list(by_key.values()))
        except Exception as exc:
            for key in by_key:
                failed[key] = exc
