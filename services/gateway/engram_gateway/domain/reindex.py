"""One reindex over several stores, as the operator sees it: each store's answer kept, and one
state and one count over them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STORES = ("memory", "knowledge")
"""The stores a reindex moves: memories (the memory service) and knowledge (enrichment)."""
PATHS = {
    "memory": ("memory", "/internal/v1/reindex"),
    "knowledge": ("enrichment", "/internal/v1/knowledge/reindex"),
}
"""Each store's service and internal route."""
UNAVAILABLE = "unavailable"
REFUSED = "refused"


def overall_state(states: list[str]) -> str:
    """Running while any store runs; else failed if any failed; else done if any is done."""
    for state in ("running", "failed", "done"):
        if state in states:
            return state
    return "none"


def combined(stores: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """Every store's view under `stores`, and over the stores that answered with a job: one
    state, done and total summed, rate summed, the longest time and eta."""
    jobs = [view for view in stores.values() if "done" in view]
    etas = [view["eta_seconds"] for view in jobs if view.get("eta_seconds") is not None]
    return {
        "state": overall_state([str(view.get("state")) for view in stores.values()]),
        "embedder": next((view["embedder"] for view in jobs if "embedder" in view), None),
        "done": sum(int(view["done"]) for view in jobs),
        "total": sum(int(view["total"]) for view in jobs),
        "rate": round(sum(float(view.get("rate") or 0) for view in jobs), 1),
        "seconds": max((float(view.get("seconds") or 0) for view in jobs), default=0.0),
        "eta_seconds": max(etas) if etas else None,
        "stores": dict(stores),
    }


def refusal(stores: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The first store's refusal when no store started (None when one did, or none refused)."""
    if any(view.get("state") not in (REFUSED, UNAVAILABLE) for view in stores.values()):
        return None
    return next((view for view in stores.values() if view.get("state") == REFUSED), None)
