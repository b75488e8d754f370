"""What a memory reindex walks (the move itself is `engram_embedders.reindex`)."""

LIVE = ("active", "superseded")
"""Rows whose memories have a point: the ones a reindex embeds again."""
