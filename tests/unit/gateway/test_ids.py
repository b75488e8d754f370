"""A retried write names the same memory or conversation; a write without a key never collides."""

from __future__ import annotations

import pytest

from engram_gateway.domain.ids import derived_id, memory_id_for

pytestmark = pytest.mark.unit


def test_an_idempotency_key_names_one_memory_per_tenant_and_agent() -> None:
    first = memory_id_for("tnt_a", "agt_1", "k1")
    assert first == memory_id_for("tnt_a", "agt_1", "k1")
    assert first.startswith("mem_") and len(first) == len("mem_") + 32
    assert first != memory_id_for("tnt_b", "agt_1", "k1")
    assert first != memory_id_for("tnt_a", "agt_2", "k1")


def test_a_conversation_and_a_memory_with_the_same_key_differ() -> None:
    conversation = derived_id("conv", "tnt_a", "agt_1", "k1")
    assert conversation.startswith("conv_")
    assert conversation.removeprefix("conv_") != memory_id_for("tnt_a", "agt_1", "k1")[4:]


def test_without_a_key_every_write_is_new() -> None:
    assert memory_id_for("tnt_a", "agt_1", None) != memory_id_for("tnt_a", "agt_1", None)
