"""What a knowledge reindex walks, as data: the items a collection holds a point for, and what
changed under a page while it was embedded (the move itself is `engram_embedders.reindex`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ENTITIES = "entities"
PASSAGES = "passages"
"""The walk's phases: every entity's facts and sections, then every passage."""


@dataclass(frozen=True)
class Item:
    """A fact, section or passage as its stored document gives it now: `key` is the document's
    `_id`, `entry` the point's fields as the collection's write takes them, text last but one
    (the vector, last, is left empty until embedded)."""

    key: str
    tenant_id: str
    kind: str
    item_id: str
    entry: tuple[Any, ...]

    @property
    def text(self) -> str:
        return str(self.entry[-2])

    @property
    def ref(self) -> tuple[str, str]:
        return self.tenant_id, self.item_id


def item_of(payload: Mapping[str, Any]) -> str:
    """The fact, section or passage id a point's payload names."""
    return str(payload.get("fact_id") or payload.get("section_id") or payload.get("passage_id"))


def changed_under(
    page: Sequence[Item], now: Mapping[tuple[str, str], Item]
) -> tuple[list[Item], list[Item]]:
    """A page's items read again after it was embedded: those gone (no longer live), and those
    whose text changed meanwhile, as they are now."""
    gone = [item for item in page if item.ref not in now]
    rewritten = [
        now[item.ref] for item in page if item.ref in now and now[item.ref].text != item.text
    ]
    return gone, rewritten


def by_group(items: Sequence[Item]) -> dict[tuple[str, str], list[Item]]:
    """Items by tenant and kind: one embedding call and one write per group."""
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        groups.setdefault((item.tenant_id, item.kind), []).append(item)
    return groups
