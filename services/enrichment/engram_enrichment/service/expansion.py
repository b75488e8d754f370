"""Search expansion: after each hit, the live facts of the entities related to its entity,
nearest first (`expand` hops, walked either way through existing entities)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram_enrichment.service.knowledge import KnowledgeBase
from engram_enrichment.service.relations import NoSuchEntity, RelationGraph
from engram_enrichment.service.search import fact_result

NEIGHBOURS_PER_HIT = 10
"""Related entities whose facts follow one hit, nearest first."""
EXPANDED_HITS = 10
"""The top hits that are expanded; later hits are answered as they are."""


async def neighbours(
    graph: RelationGraph, tenant_id: str, entity_id: str, depth: int
) -> list[tuple[str, int, str]]:
    """(entity, distance, relation reached by) for each existing entity within `depth` hops,
    nearest first, then by id."""
    try:
        walk = await graph.walk(tenant_id, entity_id, "both", None, depth)
    except NoSuchEntity:
        return []
    nearest: dict[str, tuple[int, str]] = {}
    for edge in sorted(walk.edges, key=lambda e: e.order()):
        if edge.other in walk.present and edge.other != entity_id:
            nearest.setdefault(edge.other, (edge.depth, str(edge.row["relation_id"])))
    return sorted(((e, d, r) for e, (d, r) in nearest.items()), key=lambda n: (n[1], n[0]))


async def expand(
    graph: RelationGraph,
    knowledge: KnowledgeBase,
    tenant_id: str,
    results: Sequence[dict[str, Any]],
    depth: int,
) -> list[dict[str, Any]]:
    """The results with, after each of the top hits on an entity, its neighbours' live facts
    (each neighbour once, after the best-ranked hit that reaches it; none already a hit)."""
    hit_entities = {str(r["entity_id"]) for r in results if r.get("entity_id")}
    hit_facts = {str(r["fact_id"]) for r in results if r.get("fact_id")}
    shown: set[str] = set()
    expanded: list[dict[str, Any]] = []
    for rank, result in enumerate(results):
        expanded.append(result)
        entity_id = result.get("entity_id")
        if rank >= EXPANDED_HITS or not entity_id or entity_id in shown:
            continue
        shown.add(str(entity_id))
        near = [
            n
            for n in await neighbours(graph, tenant_id, str(entity_id), depth)
            if n[0] not in shown and n[0] not in hit_entities
        ][:NEIGHBOURS_PER_HIT]
        loaded = {
            e.entity_id: e for e in await knowledge.load_many(tenant_id, [n[0] for n in near])
        }
        for other, distance, relation_id in near:
            shown.add(other)
            entity = loaded.get(other)
            if entity is None:
                continue
            for fact_id in sorted(entity.facts):
                found = fact_result(entity, fact_id)
                if found is None or fact_id in hit_facts:
                    continue
                expanded.append(
                    {
                        **found,
                        "expanded": {
                            "from": entity_id,
                            "distance": distance,
                            "relation_id": relation_id,
                        },
                    }
                )
    return expanded
