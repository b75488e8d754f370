"""The scripted article scenario (create, contradict, resolve, revise), as fixed events.

Event ids and times are fixed so contradiction ids and articles are byte-for-byte stable; the
unit golden test and the integration test replay the same steps against the same files.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from engram_events import Envelope
from engram_events.ids import Scalar
from tests.unit.enrichment.scenario import upserted

TENANT = "tnt_golden"
ENTITY = "carrier:c1"
EXPECTED = Path(__file__).resolve().parents[2] / "integration" / "enrichment" / "expected"
STEPS = ("create", "contradict", "resolve", "revise")
KEEP_VALUE = "Berlin"


def _id(n: int) -> uuid.UUID:
    return uuid.UUID(int=0x5CE0_0000_0000_4000_8000_0000_0000_0000 + n)


def events(step: str, tenant: str = TENANT) -> list[Envelope[Any]]:
    """The record events a step produces (the resolve step is an API call, not an event)."""
    if step == "create":
        attrs: dict[str, Scalar] = {"id": "c1", "name": "Acme Freight", "hq": "Berlin", "fleet": 12}
        return [upserted("rec_a", 1, attrs, minute=0, tenant=tenant, event_id=_id(1))]
    if step == "contradict":
        attrs = {"id": "c1", "name": "Acme Freight", "hq": "Munich"}
        return [upserted("rec_b", 1, attrs, minute=1, tenant=tenant, event_id=_id(2))]
    if step == "revise":
        attrs = {"id": "c1", "name": "Acme Freight", "hq": "Berlin", "fleet": 14}
        return [upserted("rec_a", 2, attrs, minute=3, tenant=tenant, event_id=_id(3))]
    return []


def expected(step: str) -> str:
    return (EXPECTED / f"{step}.md").read_text(encoding="utf-8")
