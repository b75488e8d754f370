"""Ingest: stores each document version once and keeps its extract log."""
