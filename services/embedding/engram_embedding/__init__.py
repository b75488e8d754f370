"""Embedding: turns requested texts into vectors carrying the embedder's own provenance."""
