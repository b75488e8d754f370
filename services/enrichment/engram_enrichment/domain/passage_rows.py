"""A passage enrichment keeps, typed: the passage as `passage.upserted` carried it and the digest
of the text its vector is of; mapped from storage in `adapters/passages.py`."""

from __future__ import annotations

from dataclasses import dataclass

from engram_events.payloads.passages import PassageUpserted


@dataclass(frozen=True, slots=True)
class PassageRow:
    """One tenant's passage: what a search hit cites, and what a computed vector is checked
    against (its text hash) before it is stored."""

    tenant_id: str
    passage: PassageUpserted
    embedded_sha256: str

    @property
    def passage_id(self) -> str:
        """The passage's id."""
        return self.passage.passage_id
