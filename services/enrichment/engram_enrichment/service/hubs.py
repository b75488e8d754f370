"""Which nodes earlier reads found with many rows on an end, so a large frontier's hubs are read
one by one in their index's order instead of sorted with the rest by `$in` (the local server
reads and sorts every row an `$in` touches). A hint: a wrong or missing one costs time, never
a different page."""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, Literal

End = Literal["subject", "object"]
HUB = 32
"""Rows on one end from which a node is read by itself: sorting that many rows in an `$in`
costs the local server about what a query of its own does."""
MOST_ALONE = 24
"""Nodes of one frontier and end read by themselves at most (known hubs first)."""
KEPT = 20_000
"""Hubs remembered (the least recently seen are forgotten first)."""


def kind_of(node: str) -> str:
    """An entity's type, the part of its id before the first colon (`carrier:c1`)."""
    return node.split(":", 1)[0]


class Hubs:
    """A bounded memory of (tenant, end, node) seen with at least `HUB` rows, and per entity
    type how many of its nodes were seen as hubs and as wholly read small ones: a node never
    seen is taken for a hub when its type's hubs outnumber its small nodes."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self._nodes: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._kinds: dict[tuple[str, str, str], list[int]] = {}

    def note(self, tenant_id: str, end: End, counts: Mapping[str, int], whole: bool) -> None:
        """Learn from the rows read of each node by this end (all of them when `whole`)."""
        for node, count in counts.items():
            tally = self._kinds.setdefault((tenant_id, end, kind_of(node)), [0, 0])
            if count >= HUB:
                key = (tenant_id, end, node)
                self._nodes[key] = None
                self._nodes.move_to_end(key)
                tally[0] += 1
            elif whole:
                tally[1] += 1
        while len(self._nodes) > self.kept:
            self._nodes.popitem(last=False)
        while len(self._kinds) > self.kept:
            del self._kinds[next(iter(self._kinds))]

    def note_rows(
        self,
        tenant_id: str,
        end: End,
        nodes: Iterable[str],
        rows: Iterable[Mapping[str, Any]],
        whole: bool,
    ) -> None:
        """Learn from these rows, read by their `end` for these nodes."""
        counts = Counter(dict.fromkeys(nodes, 0))
        counts.update(str(row[f"{end}_id"]) for row in rows)
        self.note(tenant_id, end, counts, whole)

    def alone(self, tenant_id: str, end: End, nodes: Iterable[str]) -> set[str]:
        """The nodes to read by themselves: known hubs, then those of a type seen more often
        with many rows than with few, at most `MOST_ALONE`."""
        known, likely = [], []
        for node in sorted(nodes):
            if (tenant_id, end, node) in self._nodes:
                known.append(node)
                continue
            hubs, small = self._kinds.get((tenant_id, end, kind_of(node)), (0, 0))
            if hubs > small:
                likely.append(node)
        return set((known + likely)[:MOST_ALONE])
