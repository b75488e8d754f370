"""Short retry backoff for services under test: each service reads its own prefixed setting."""

from __future__ import annotations

SERVICES = ("ingest", "extraction", "embedding", "memory", "enrichment", "connectors", "gateway")


def fast_retries(base_seconds: float, max_seconds: float) -> dict[str, str]:
    """The environment that gives every service this first backoff and this cap."""
    return {
        f"ENGRAM_{service.upper()}_RETRY_{bound}_SECONDS": str(seconds)
        for service in SERVICES
        for bound, seconds in (("BASE", base_seconds), ("MAX", max_seconds))
    }
