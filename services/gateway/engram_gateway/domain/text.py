"""Text the gateway hands to an embedder: refused here (422) when no embedder could take it."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from engram_events.values import Text


def not_blank(value: str) -> str:
    """The embedders refuse whitespace-only text (`str.strip`), so the request is invalid."""
    if not value.strip():
        raise ValueError("must contain a non-whitespace character")
    return value


QueryText = Annotated[Text, AfterValidator(not_blank)]
"""A query to embed: encodable, with at least one character that is not whitespace."""
