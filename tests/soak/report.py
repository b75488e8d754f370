"""The soak's figures and verdicts: latency per route, RSS trend per process, lag, DLQ, prunes."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from tests.soak.load import Load, Rates
from tests.soak.sampler import Sampler

RSS_GROWTH_LIMIT = 0.15
SERVERS = frozenset({"kafka", "ferretdb"})
"""Reported but not judged: a database's cache grows with its data, which is not a leak."""
"""RSS in the last quarter of the load may exceed the second quarter's by at most this share."""

WINDOW_SECONDS = 30.0


def _percentiles(seconds: list[float]) -> dict[str, float]:
    values = np.array(seconds) * 1000
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 1),
        "p95_ms": round(float(np.percentile(values, 95)), 1),
        "p99_ms": round(float(np.percentile(values, 99)), 1),
    }


def routes(load: Load) -> dict[str, dict[str, Any]]:
    """Per route: calls, errors by class, and latency percentiles."""
    grouped: dict[str, list[Any]] = defaultdict(list)
    for call in load.calls:
        grouped[call.route].append(call)
    out = {}
    for route, calls in sorted(grouped.items()):
        out[route] = {
            "calls": len(calls),
            "5xx_or_transport": sum(1 for c in calls if c.status >= 500 or c.status == 0),
            "4xx": sum(1 for c in calls if 400 <= c.status < 500),
            **_percentiles([c.seconds for c in calls]),
        }
    return out


def rss_trend(sampler: Sampler, load_seconds: float) -> dict[str, dict[str, float]]:
    """Per process: mean RSS in the second and last quarter of the load, max, and growth."""
    during = [s for s in sampler.samples if s.at <= load_seconds]
    q2 = [s for s in during if load_seconds / 4 <= s.at < load_seconds / 2]
    q4 = [s for s in during if s.at >= load_seconds * 3 / 4]
    names = sorted({n for s in during for n in s.rss_mib})
    out = {}
    for name in names:
        early = [s.rss_mib[name] for s in q2 if name in s.rss_mib]
        late = [s.rss_mib[name] for s in q4 if name in s.rss_mib]
        every = [s.rss_mib[name] for s in during if name in s.rss_mib]
        if not (early and late):
            continue
        out[name] = {
            "q2_mean_mib": round(float(np.mean(early)), 1),
            "q4_mean_mib": round(float(np.mean(late)), 1),
            "max_mib": round(max(every), 1),
            "growth": round(float(np.mean(late)) / float(np.mean(early)) - 1, 3),
        }
    return out


def summarize(
    load: Load, sampler: Sampler, *, minutes: float, seconds: float, rates: Rates
) -> dict[str, Any]:
    """Everything the JSON holds, with the checks that make the run pass or fail."""
    load_seconds = minutes * 60
    per_route = routes(load)
    rss = rss_trend(sampler, load_seconds)
    lag_max = {
        service: max((s.lag.get(service, 0) for s in sampler.samples), default=0)
        for service in (sampler.samples[0].lag if sampler.samples else {})
    }
    final = sampler.samples[-1] if sampler.samples else None
    prunes = [p for p in load.prunes if "seconds" in p]
    server_errors = sum(r["5xx_or_transport"] for r in per_route.values())
    checks = {
        "no_5xx": server_errors == 0,
        "dlq_empty": final is not None and final.dlq == 0,
        "rss_flat": all(
            v["growth"] <= RSS_GROWTH_LIMIT for name, v in rss.items() if name not in SERVERS
        ),
        "lag_drained": final is not None and all(v == 0 for v in final.lag.values()),
        "prunes_verified": len(prunes) == len(load.prunes)
        and all(p.get("verified_empty") is True for p in prunes),
    }
    return {
        "bench": "soak",
        "minutes": minutes,
        "wall_seconds": round(seconds, 1),
        "rates": asdict(rates),
        "calls": len(load.calls),
        "routes": per_route,
        "rss": rss,
        "rss_growth_limit": RSS_GROWTH_LIMIT,
        "rss_judged": sorted(name for name in rss if name not in SERVERS),
        "lag_max": lag_max,
        "lag_final": final.lag if final else {},
        "dlq_final": final.dlq if final else None,
        "prune_jobs": {
            "started": len(load.prunes),
            "completed": len(prunes),
            "verified_empty": sum(1 for p in prunes if p.get("verified_empty") is True),
            **(_percentiles([p["seconds"] for p in prunes]) if prunes else {}),
        },
        "first_failures": load.failures[:20],
        "checks": checks,
        "timeline": [asdict(s) for s in sampler.samples],
    }


def plot(load: Load, sampler: Sampler, folder: Path) -> list[str]:
    """RSS, lag and p95-per-route over time as PNGs; nothing when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    at = [s.at / 60 for s in sampler.samples]
    for name, series, ylabel in (
        ("soak_rss.png", [s.rss_mib for s in sampler.samples], "RSS (MiB)"),
        ("soak_lag.png", [s.lag for s in sampler.samples], "consumer lag (messages)"),
    ):
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for key in sorted({k for row in series for k in row}):
            ax.plot(at, [row.get(key, np.nan) for row in series], label=key)
        ax.set_xlabel("minutes")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        fig.savefig(folder / name, dpi=100)
        plt.close(fig)
        written.append(name)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    by_route: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for call in load.calls:
        by_route[call.route][int(call.at // WINDOW_SECONDS)].append(call.seconds * 1000)
    for route, windows in sorted(by_route.items()):
        keys = sorted(windows)
        xs = [(k + 0.5) * WINDOW_SECONDS / 60 for k in keys]
        ax.plot(xs, [np.percentile(windows[k], 95) for k in keys], label=route)
    ax.set_yscale("log")
    ax.set_xlabel("minutes")
    ax.set_ylabel(f"p95 latency per {WINDOW_SECONDS:g} s window (ms)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(folder / "soak_latency.png", dpi=100)
    plt.close(fig)
    written.append("soak_latency.png")
    return written
