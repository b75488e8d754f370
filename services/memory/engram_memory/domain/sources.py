"""Which memories a gone source takes with it: any one source gone, or (by setting) all."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def withdrawn_by(derived_from: Sequence[str], gone: Collection[str], require_all: bool) -> bool:
    """Whether a memory made from `derived_from` must go, given the sources known to be gone."""
    if not derived_from:
        return False
    if require_all:
        return all(source in gone for source in derived_from)
    return any(source in gone for source in derived_from)
