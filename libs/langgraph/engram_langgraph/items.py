"""One LangGraph item as one Engram memory, and back.

The content is what recall embeds and matches: the indexed fields' text, else the value as
JSON. The metadata carries the key, the namespace, the whole value as JSON (so `get` returns
it exactly) and the value's top-level scalar fields (so filters narrow on the server).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import Item, SearchItem
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from engram_client import models
from engram_langgraph import namespaces
from engram_langgraph.filters import scalar_fields

KEY = "lg_key"
VALUE = "lg_value"
CREATED_AT = "lg_created_at"
MAX_KEY_CHARS = 256


@dataclass(frozen=True)
class MemoryWrite:
    """The fields of one `write_memory` call."""

    content: str
    metadata: dict[str, Any]


def check_key(key: str) -> str:
    """A key must fit a metadata filter string, since `get` selects by it."""
    if not key or len(key) > MAX_KEY_CHARS:
        raise ValueError(f"a key must have 1 to {MAX_KEY_CHARS} characters, got {len(key)}")
    return key


def value_json(value: Mapping[str, Any]) -> str:
    """The value as JSON, exactly what `get` decodes (non-JSON values are refused)."""
    return json.dumps(dict(value), ensure_ascii=False, separators=(",", ":"))


def content_of(value: Mapping[str, Any], fields: Sequence[str] | None, max_chars: int) -> str:
    """The text recall sees: the indexed fields' text when there is any, else the JSON value."""
    texts: list[str] = []
    for path in fields or ():
        texts.extend(t for t in get_text_at_path(dict(value), tokenize_path(path)) if t.strip())
    text = "\n".join(texts) if texts else json.dumps(dict(value), ensure_ascii=False)
    return text[:max_chars]


def memory_write(
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    *,
    fields: Sequence[str] | None,
    created_at: datetime | None,
    max_chars: int,
) -> MemoryWrite:
    """The memory that stores one item; a replacement keeps the first put's `created_at`
    (the first put's memory is stamped by the server, so both come from one clock)."""
    metadata: dict[str, Any] = {
        **scalar_fields(value),
        **namespaces.namespace_metadata(namespace),
        KEY: check_key(key),
        VALUE: value_json(value),
    }
    if created_at is not None:
        metadata[CREATED_AT] = created_at.isoformat()
    return MemoryWrite(content_of(value, fields, max_chars), metadata)


def item_filter(namespace: tuple[str, ...], key: str, scope: namespaces.Scope) -> dict[str, Any]:
    """The listing filter that selects one item's memory."""
    metadata = {namespaces.NAMESPACE_KEY: namespaces.joined(namespace), KEY: check_key(key)}
    return {**scope.filter(), "metadata": metadata}


def _when(value: Any, fallback: datetime | None) -> datetime:
    """A stored timestamp as an aware datetime."""
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if fallback is not None:
        return fallback if fallback.tzinfo else fallback.replace(tzinfo=UTC)
    return datetime.now(UTC)


def created_at_of(memory: models.Memory) -> datetime:
    """When the item a memory holds was first put."""
    metadata = memory.metadata or {}
    return _when(metadata.get(CREATED_AT), memory.created_at)


def is_item(metadata: Mapping[str, Any] | None) -> bool:
    """Whether a memory was written by this store (it carries a key, namespace and value)."""
    found = metadata or {}
    return all(isinstance(found.get(k), str) for k in (KEY, VALUE, namespaces.NAMESPACE_KEY))


def namespace_of(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The namespace a store memory was put in."""
    return namespaces.split(str(metadata[namespaces.NAMESPACE_KEY]))


def to_item(memory: models.Memory) -> Item:
    """The item a listed memory holds; updated_at is when this version was written."""
    metadata = memory.metadata or {}
    return Item(
        value=json.loads(metadata[VALUE]),
        key=str(metadata[KEY]),
        namespace=namespace_of(metadata),
        created_at=created_at_of(memory),
        updated_at=_when(None, memory.created_at),
    )


def to_search_item(memory: models.Memory | models.RecallHit, score: float | None) -> SearchItem:
    """A listed memory (no score) or a recall hit (its fused score) as a search result."""
    metadata = memory.metadata or {}
    return SearchItem(
        namespace=namespace_of(metadata),
        key=str(metadata[KEY]),
        value=json.loads(metadata[VALUE]),
        created_at=_when(metadata.get(CREATED_AT), memory.created_at),
        updated_at=_when(None, memory.created_at),
        score=score,
    )


def newest_per_key(found: list[SearchItem]) -> list[SearchItem]:
    """One result per item, its newest version (two exist only while a put replaces one)."""
    newest: dict[tuple[tuple[str, ...], str], SearchItem] = {}
    for item in found:
        held = newest.get((item.namespace, item.key))
        if held is None or item.updated_at > held.updated_at:
            newest[(item.namespace, item.key)] = item
    kept = {id(item) for item in newest.values()}
    return [item for item in found if id(item) in kept]
