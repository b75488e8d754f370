"""What the ops tests share: an ops tenant, its id, and reading the telemetry store."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from pymongo import MongoClient

from engram_gateway.domain.keys import parse_key
from tests.conftest import Infra


def create_ops_tenant(env: dict[str, str], name: str = "ops") -> str:
    """`python -m engram_gateway create-tenant NAME --ops`: prints only a key with the ops role."""
    out = subprocess.run(
        [sys.executable, "-m", "engram_gateway", "create-tenant", name, "--ops"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, "create-tenant --ops prints exactly the key"
    return lines[0]


def tenant_of(infra: Infra, names: dict[str, str], key: str) -> str:
    """The tenant a key belongs to (read from the gateway's key store, as the gateway does)."""
    parts = parse_key(key)
    assert parts is not None
    db = MongoClient[dict[str, Any]](infra.mongodb_uri)[f"{names['ENGRAM_DATABASE_PREFIX']}gateway"]
    row = db.api_keys.find_one({"_id": parts[0]})
    assert row is not None
    return str(row["tenant_id"])


def telemetry(infra: Infra, names: dict[str, str]) -> Any:
    """The local telemetry database of this test's prefix."""
    return MongoClient(infra.mongodb_uri)[f"{names['ENGRAM_DATABASE_PREFIX']}telemetry"]
