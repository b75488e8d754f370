"""Enrichment's internal HTTP API: knowledge, search, prune verification, lineage and which
fact ids are the tenant's."""

from __future__ import annotations

from fastapi import APIRouter

from engram_enrichment.api import knowledge, known, lineage, prune, search

ROUTERS: list[APIRouter] = [
    knowledge.router,
    search.router,
    prune.router,
    lineage.router,
    known.router,
]
"""Every router, in the order the app mounts them."""
