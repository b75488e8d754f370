"""What a memory write may name: its `derived_from` sources must be the tenant's, and the
memory it `supersedes` must be the same agent's (pure: who owns an id, and the problems)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

_HASHED_FACT = re.compile(r"^f[0-9a-f]{32}$")
SUBMITTED_AS = {"ingest": ("document",), "memory": ("memory", "conversation")}
"""The submission kinds under which the gateway notes an id its owner may not hold yet."""
SOURCE_KINDS = "document, record, fact, memory or conversation"


class Naming(Protocol):
    """A memory write, as far as the ids it names."""

    @property
    def derived_from(self) -> Sequence[str]: ...

    @property
    def supersedes(self) -> str | None: ...


def owner_of(item_id: str) -> str | None:
    """The service whose ids look like this one (None: no service issues such ids)."""
    if item_id.startswith("doc_"):
        return "ingest"
    if item_id.startswith("rec_"):
        return "extraction"
    if item_id.startswith(("mem_", "conv_")):
        return "memory"
    if item_id.count(":") >= 2 or _HASHED_FACT.match(item_id):
        return "enrichment"
    return None


def asked(writes: Sequence[Naming]) -> dict[str, list[str]]:
    """Each owner and the ids to ask it about (each once); supersedes go to memory."""
    by_owner: dict[str, dict[str, None]] = {}
    for write in writes:
        for item_id in write.derived_from:
            owner = owner_of(item_id)
            if owner is not None:
                by_owner.setdefault(owner, {})[item_id] = None
        if write.supersedes is not None:
            by_owner.setdefault("memory", {})[write.supersedes] = None
    return {owner: list(ids) for owner, ids in by_owner.items()}


@dataclass(frozen=True)
class Found:
    """What the owners (and the gateway's own notes of accepted writes) hold of the tenant's."""

    known: Collection[str]
    agents: Mapping[str, str]
    """The agent of each known memory and conversation."""


def _loc(where: Sequence[str], n: int, *rest: str) -> list[str]:
    return [*where, str(n), *rest] if len(where) > 1 else [*where, *rest]


def _field(where: Sequence[str], n: int, name: str) -> str:
    return f"memories[{n}].{name}" if len(where) > 1 else name


def foreign_supersedes(
    writes: Sequence[Naming], found: Found, agent_id: str, where: Sequence[str]
) -> list[dict[str, Any]]:
    """One error per write whose `supersedes` is not a memory of this agent."""
    errors = []
    for n, write in enumerate(writes):
        target = write.supersedes
        if target is not None and found.agents.get(target) != agent_id:
            name = _field(where, n, "supersedes")
            errors.append(
                {
                    "loc": _loc(where, n, "supersedes"),
                    "msg": f"{name} names no memory of this agent",
                    "type": "unknown_memory",
                }
            )
    return errors


def foreign_sources(
    writes: Sequence[Naming], found: Found, where: Sequence[str]
) -> list[dict[str, Any]]:
    """One error per `derived_from` entry that names nothing of the tenant's."""
    errors = []
    for n, write in enumerate(writes):
        for i, item_id in enumerate(write.derived_from):
            if item_id not in found.known:
                name = f"{_field(where, n, 'derived_from')}[{i}]"
                errors.append(
                    {
                        "loc": _loc(where, n, "derived_from", str(i)),
                        "msg": f"{name} names no {SOURCE_KINDS} of this tenant",
                        "type": "unknown_source",
                    }
                )
    return errors
