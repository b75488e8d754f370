"""Calls for pruning, lineage, the dead-letter queue and health."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram_client import models
from engram_client.calls.base import Call, segment

# Prune, lineage, ops


def start_prune(
    *,
    older_than_days: int | None,
    record_ids: Sequence[str] | None,
    filter: Mapping[str, str] | None,
) -> Call[models.PruneJobAccepted]:
    """Not retry-safe: each POST creates a job."""
    body: dict[str, Any] = {}
    if older_than_days is not None:
        body["older_than_days"] = older_than_days
    if record_ids:
        body["record_ids"] = list(record_ids)
    if filter:
        body["filter"] = dict(filter)
    return Call("POST", "/v1/prune", models.PruneJobAccepted.model_validate, json=body)


def get_prune_job(job_id: str, *, full_selector: bool = False) -> Call[models.PruneJob]:
    """Counts, acknowledgements and `verified_empty`; the selector's id lists in full only when
    asked (by default the first 20 of each, with `selector_sizes`)."""
    return Call(
        "GET",
        f"/v1/prune-jobs/{segment(job_id)}",
        models.PruneJob.model_validate,
        params={"selector": "full"} if full_selector else None,
        retry_safe=True,
    )


def lineage(item_id: str) -> Call[models.Lineage]:
    """What an id derives and what it derives from."""
    return Call(
        "GET", f"/v1/lineage/{segment(item_id)}", models.Lineage.model_validate, retry_safe=True
    )


def list_dead_letters() -> Call[list[models.DeadLetter]]:
    """The tenant's DLQ (ops API; the key needs the `ops` role)."""
    return Call(
        "GET",
        "/ops/dlq",
        lambda b: [models.DeadLetter.model_validate(x) for x in b],
        retry_safe=True,
    )


def replay_dead_letters(
    *, letter_id: str | None = None, consumer: str | None = None
) -> Call[dict[str, str]]:
    """Retry-safe: the gateway replays a letter once; a repeat reports `already_replayed`."""
    form = {"letter_id": letter_id} if letter_id else {"consumer": consumer or ""}
    return Call(
        "POST",
        "/ops/dlq/replay",
        lambda b: {str(k): str(v) for k, v in b["results"].items()},
        data=form,
        headers={"Accept": "application/json"},
        retry_safe=True,
    )


def tenant_dead_letters(limit: int = 50) -> Call[list[models.TenantDeadLetter]]:
    """The caller's own dead letters, newest first (any key)."""
    return Call(
        "GET",
        "/v1/dead-letters",
        lambda b: [models.TenantDeadLetter.model_validate(x) for x in b["dead_letters"]],
        params={"limit": limit},
        retry_safe=True,
    )


def replay_dead_letter(letter_id: str) -> Call[str]:
    """Not retry-safe: a letter replays once, and a repeat is a 409."""
    return Call(
        "POST",
        f"/v1/dead-letters/{segment(letter_id)}:replay",
        lambda b: str(b["result"]),
    )


def health() -> Call[models.Health]:
    """Liveness; needs no key."""
    return Call(
        "GET", "/healthz", models.Health.model_validate, retry_safe=True, authenticated=False
    )


def ready() -> Call[models.Health]:
    """Readiness with per-dependency checks; needs no key (a 503 raises ServiceUnavailable)."""
    return Call("GET", "/readyz", models.Health.model_validate, authenticated=False)


def start_reindex(
    embedder: str, hashing_dimension: int | None = None, stores: Sequence[str] | None = None
) -> Call[dict[str, Any]]:
    """Not retry-safe: a repeat while the first runs answers 409. `stores`: memory, knowledge
    (the server's default: both)."""
    body: dict[str, Any] = {"embedder": embedder}
    if hashing_dimension is not None:
        body["hashing_dimension"] = hashing_dimension
    if stores:
        body["stores"] = list(stores)
    return Call("POST", "/v1/ops/reindex", dict, json=body)


def reindex_progress() -> Call[dict[str, Any]]:
    """The latest reindex's state and progress (ops role)."""
    return Call("GET", "/v1/ops/reindex", dict, retry_safe=True)
