"""Enrichment: turns records into facts with support, contradictions and articles."""
