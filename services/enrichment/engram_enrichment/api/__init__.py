"""Enrichment's internal HTTP API: knowledge, search, prune verification and lineage."""

from __future__ import annotations

from fastapi import APIRouter

from engram_enrichment.api import knowledge, lineage, prune, search

ROUTERS: list[APIRouter] = [knowledge.router, search.router, prune.router, lineage.router]
"""Every router, in the order the app mounts them."""
