"""A core of its own for the embedding model: every other process is kept off the model's CPUs.

On a small machine the model is the write path's bottleneck, and anything the scheduler puts on
its core (the broker, the database, the other services) slows it. With `--model-cpus` the
supervisor runs on the remaining CPUs, so everything it starts inherits them, moves already
running servers there, and tells the embedding service to pin its model process to the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from engram_devstack.errors import DevstackError

MODEL_CPUS_ENV = "ENGRAM_EMBEDDING_MINILM_CPUS"


def parse_cpus(text: str) -> frozenset[int]:
    """'1' or '2,3' into CPU numbers of this machine, leaving at least one CPU for the rest."""
    try:
        cpus = frozenset(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise DevstackError(f"--model-cpus takes CPU numbers like 1 or 2,3, not {text!r}") from None
    available = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if not cpus or not cpus <= available:
        raise DevstackError(
            f"--model-cpus {text!r}: choose among this process's CPUs {sorted(available)}"
        )
    if not available - cpus:
        raise DevstackError(f"--model-cpus {text!r} would leave no CPU for everything else")
    return cpus


def others(model_cpus: frozenset[int]) -> frozenset[int]:
    """The CPUs everything but the model runs on."""
    return frozenset(os.sched_getaffinity(0)) - model_cpus


def keep_on(cpus: frozenset[int], pids: Iterable[int]) -> None:
    """Move every thread of each process to `cpus` (threads started later inherit it)."""
    for pid in pids:
        try:
            threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
        except FileNotFoundError:
            continue
        for tid in threads:
            try:
                os.sched_setaffinity(tid, cpus)
            except (ProcessLookupError, PermissionError):
                continue


def model_env(model_cpus: frozenset[int]) -> dict[str, str]:
    """The embedding service's setting that pins its model process."""
    return {MODEL_CPUS_ENV: json.dumps(sorted(model_cpus))}
