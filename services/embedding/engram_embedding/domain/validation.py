"""Which requested items may be embedded: empty or whitespace texts never reach the model."""

from __future__ import annotations

from dataclasses import dataclass

from engram_events.payloads.embeddings import RejectedItem, TextItem


@dataclass(frozen=True)
class Screened:
    """The items worth embedding and the ones refused, each with its reason."""

    accepted: list[TextItem]
    rejected: list[RejectedItem]


def screen(items: list[TextItem]) -> Screened:
    """Refuse empty and whitespace-only texts before any embedding work is paid for."""
    accepted: list[TextItem] = []
    rejected: list[RejectedItem] = []
    for item in items:
        if not item.text:
            rejected.append(RejectedItem(item_id=item.item_id, reason="empty"))
        elif not item.text.strip():
            rejected.append(RejectedItem(item_id=item.item_id, reason="whitespace"))
        else:
            accepted.append(item)
    return Screened(accepted, rejected)
