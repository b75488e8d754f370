"""Where a service keeps its vectors and how it searches them, read under its env prefix."""

from __future__ import annotations

from pydantic import BaseModel, Field


class CollectionSettings(BaseModel):
    """A service's collection; mixed into its `Settings`, which names the path and collection."""

    vector_path: str
    collection: str
    min_score: float | None = Field(
        default=None,
        description="the floor a recall or search applies; None means the embedder model's default",
    )
    lexical: bool = Field(
        default=True,
        description="keep a lexical (sparse) vector per point for hybrid and lexical search; "
        "off, search is dense only and mode=lexical is refused",
    )
