"""Only admin keys change a tenant's record types: a curator edits facts, not their shape."""

from __future__ import annotations

import pytest

from engram_gateway.domain.access import may_declare_types, roles_for

pytestmark = pytest.mark.unit


def test_only_an_admin_key_may_declare_types() -> None:
    assert may_declare_types(roles_for("admin"))
    assert not may_declare_types(roles_for("curator"))
    assert not may_declare_types(roles_for("default"))
    assert not may_declare_types(("ops",))
