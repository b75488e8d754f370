"""Garbage collection for long-running services that allocate many short-lived models."""

from __future__ import annotations

import gc

OLDER_THRESHOLDS = (20, 20)
"""Middle and old generations: collected after this many younger collections (default 10, 10)."""


def tune_after_start(young_threshold: int) -> tuple[int, int, int]:
    """Freeze what start-up built (imports, clients, schemas) so no collection scans it again,
    and collect the young generation less often; returns the thresholds now in force.

    Every pydantic model and event envelope is a tracked container, so with the default
    threshold a busy consumer runs a collection every few hundred objects and a full one over
    the whole heap every hundred of those. Cycles are still collected, only less often.
    """
    if young_threshold <= 0:
        return gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(young_threshold, *OLDER_THRESHOLDS)
    return gc.get_threshold()
