"""Namespaces onto Engram scopes: the root label names the agent, then the user, then the session.

Every label is also kept in the memory's metadata (`lg_ns` joined by `.`, which LangGraph
forbids inside a label, and `lg_ns_<i>` one by one), so a namespace deeper than three labels
is exact too and prefixes of any depth narrow on the server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import InvalidNamespaceError, MatchCondition

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]*$")
MAX_LABEL_CHARS = 256
MAX_DEPTH = 16
NAMESPACE_KEY = "lg_ns"


def label_key(position: int) -> str:
    """The metadata key holding the label at `position`."""
    return f"{NAMESPACE_KEY}_{position}"


def joined(namespace: tuple[str, ...]) -> str:
    """The namespace as one metadata string (labels never contain a period)."""
    return ".".join(namespace)


def split(value: str) -> tuple[str, ...]:
    """The namespace a `lg_ns` metadata string holds."""
    return tuple(value.split("."))


@dataclass(frozen=True)
class Scope:
    """Where a namespace lives in Engram: an agent and, deeper, a user and a session."""

    agent_id: str
    user_id: str | None = None
    session_id: str | None = None

    def filter(self) -> dict[str, Any]:
        """The scope part of a recall or listing filter."""
        found: dict[str, Any] = {}
        if self.user_id is not None:
            found["user_id"] = self.user_id
        if self.session_id is not None:
            found["session_id"] = self.session_id
        return found


def _engram_id(label: str, role: str, namespace: tuple[str, ...]) -> str:
    """A label used as an Engram id must look like one (the API's own id pattern)."""
    if len(label) > MAX_LABEL_CHARS or not ID_PATTERN.match(label):
        raise InvalidNamespaceError(
            f"label {label!r} of {namespace} is the Engram {role}: it must match "
            f"{ID_PATTERN.pattern} and be at most {MAX_LABEL_CHARS} characters"
        )
    return label


def scope_of(namespace: tuple[str, ...], agents: Mapping[str, str]) -> Scope:
    """The agent (the root label, or the agent configured for it), user and session."""
    if not namespace:
        raise InvalidNamespaceError("a namespace needs at least its root label (the agent)")
    if len(namespace) > MAX_DEPTH or len(joined(namespace)) > MAX_LABEL_CHARS:
        raise InvalidNamespaceError(
            f"{namespace} is too long: at most {MAX_DEPTH} labels and "
            f"{MAX_LABEL_CHARS} characters joined"
        )
    agent = agents.get(namespace[0], namespace[0])
    return Scope(
        agent_id=_engram_id(agent, "agent id", namespace),
        user_id=_engram_id(namespace[1], "user id", namespace) if len(namespace) > 1 else None,
        session_id=_engram_id(namespace[2], "session id", namespace)
        if len(namespace) > 2
        else None,
    )


def namespace_metadata(namespace: tuple[str, ...]) -> dict[str, str]:
    """Metadata naming the namespace whole and label by label."""
    labels = {label_key(i): label for i, label in enumerate(namespace)}
    return {NAMESPACE_KEY: joined(namespace), **labels}


def prefix_conditions(prefix: tuple[str, ...]) -> dict[str, str]:
    """Metadata equalities for a prefix's concrete labels (`*` matches any label)."""
    return {label_key(i): label for i, label in enumerate(prefix) if label != "*"}


def matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's prefix/suffix match, `*` standing for any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported match type: {condition.match_type}")
    return all(want == "*" or have == want for have, want in pairs)


def select(
    found: Iterable[tuple[str, ...]],
    conditions: Iterable[MatchCondition],
    max_depth: int | None,
    limit: int,
    offset: int,
) -> list[tuple[str, ...]]:
    """The distinct namespaces meeting every condition, cut to `max_depth`, sorted, paged."""
    wanted = list(conditions)
    kept = {ns for ns in found if all(matches(c, ns) for c in wanted)}
    if max_depth is not None:
        kept = {ns[:max_depth] for ns in kept}
    return sorted(kept)[offset : offset + limit]
