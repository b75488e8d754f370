"""The store contract through the real gateway and memory service, sync and async."""

from __future__ import annotations

from tests.support.store_contract import AsyncStoreContract, StoreContract


class TestContractOnEngram(StoreContract):
    """Every contract test against a running gateway."""


class TestAsyncContractOnEngram(AsyncStoreContract):
    """The awaited methods against a running gateway."""
