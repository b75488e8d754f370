"""Extraction: turns documents and imported rows into records with lineage and revisions."""
