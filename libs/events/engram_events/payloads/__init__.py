"""Typed payloads, one module per stream."""
