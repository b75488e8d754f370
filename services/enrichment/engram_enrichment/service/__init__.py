"""Enrichment's use cases: changing entities, search, prune verification and lineage."""
