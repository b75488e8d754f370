"""Whitespace-only queries are the caller's error (422), never the embedder's (a 5xx)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from engram_gateway.domain.text import QueryText

pytestmark = pytest.mark.unit


class Body(BaseModel):
    query: QueryText


@pytest.mark.parametrize("blank", ["", " ", "\t\x1c", "\u2003\n"])
def test_blank_queries_are_refused(blank: str) -> None:
    with pytest.raises(ValidationError):
        Body(query=blank)


def test_text_with_a_visible_character_passes_unchanged() -> None:
    assert Body(query=" carriers\t").query == " carriers\t"
