"""Enrichment's internal HTTP API: knowledge, search, prune verification, lineage, which fact ids
are the tenant's, and the knowledge store's reindex."""

from __future__ import annotations

from fastapi import APIRouter

from engram_enrichment.api import knowledge, known, lineage, prune, reindex, search

ROUTERS: list[APIRouter] = [
    knowledge.router,
    search.router,
    prune.router,
    lineage.router,
    known.router,
    reindex.router,
]
"""Every router, in the order the app mounts them."""
