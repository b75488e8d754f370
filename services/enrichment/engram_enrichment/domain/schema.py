"""The schema registry: which attributes become facts and which may hold several values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ANY_TYPE = "*"
DEFAULT_IDENTITY = frozenset({"id", "type"})


@dataclass(frozen=True)
class Schema:
    """Every attribute is single-valued unless listed as multi-valued for its type or for `*`."""

    multi_valued: dict[str, frozenset[str]] = field(default_factory=dict)
    identity: frozenset[str] = DEFAULT_IDENTITY

    def is_fact(self, attribute: str) -> bool:
        """Identity columns (the entity key and type) name the entity; they are not facts about it."""
        return attribute not in self.identity

    def is_single_valued(
        self, entity_type: str, attribute: str, declared: list[str] | None = None
    ) -> bool:
        """Two live values of a single-valued attribute are a contradiction; a type definition
        the records carry (`declared`) names exactly its single-valued attributes."""
        if declared is not None:
            return attribute in declared
        listed = self.multi_valued.get(entity_type, frozenset()) | self.multi_valued.get(
            ANY_TYPE, frozenset()
        )
        return attribute not in listed

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Schema:
        """`{"multi_valued": {"carrier": ["lanes"], "*": ["tags"]}, "identity": ["id", "type"]}`."""
        multi = data.get("multi_valued", {})
        if not isinstance(multi, dict) or not all(isinstance(v, list) for v in multi.values()):
            raise ValueError("multi_valued must map a record type (or '*') to attribute names")
        identity = data.get("identity", sorted(DEFAULT_IDENTITY))
        if not isinstance(identity, list):
            raise ValueError("identity must be a list of attribute names")
        return cls(
            multi_valued={str(k): frozenset(map(str, v)) for k, v in multi.items()},
            identity=frozenset(map(str, identity)),
        )
