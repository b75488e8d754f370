"""A curator's edit: only curator and admin keys may, and the published event carries the key,
the time and the reason."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from engram_events import Envelope
from engram_gateway.domain.access import CURATOR, may_curate, role_of, roles_for
from engram_gateway.domain.model import Caller
from engram_gateway.service.curation import Curation
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit
NOW = datetime(2026, 12, 5, 14, 0, tzinfo=UTC)


class Sink:
    """Keeps what was published."""

    def __init__(self) -> None:
        self.events: list[Envelope[Any]] = []

    async def publish(self, event: Envelope[Any]) -> None:
        self.events.append(event)

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None:
        self.events.extend(events)


def caller(*roles: str) -> Caller:
    return Caller(tenant_id="tnt_a", key_id="0123456789abcdef", roles=roles)


def test_curator_and_admin_keys_may_curate_and_a_curator_key_shows_its_role() -> None:
    assert may_curate(roles_for("curator")) and may_curate(("admin",))
    assert not may_curate(()) and not may_curate(("ops",))
    assert role_of(roles_for("curator")) == CURATOR


async def test_an_edit_is_published_with_the_key_time_and_reason() -> None:
    sink = Sink()
    await Curation(sink, now=lambda: NOW).edit(
        caller("curator"), "carrier:c1", "phone", "assert", "called them", "+47 1"
    )
    (event,) = sink.events
    assert event.event_type == "fact.edit_requested" and event.tenant_id == "tnt_a"
    payload = event.payload
    assert (payload.entity_id, payload.attribute, payload.value) == ("carrier:c1", "phone", "+47 1")
    assert payload.edit.key_id == "0123456789abcdef" and payload.edit.at == NOW
    assert (payload.edit.action, payload.edit.reason) == ("assert", "called them")


async def test_a_key_without_the_role_is_refused_and_nothing_is_published() -> None:
    sink = Sink()
    with pytest.raises(Problem) as refused:
        await Curation(sink).edit(caller(), "carrier:c1", "phone", "withdraw", "wrong")
    assert refused.value.status == 403 and sink.events == []
