"""Creating tenants the way operators do: the gateway's CLI, which prints only the key."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from pymongo import MongoClient


def create_tenant(env: dict[str, str], name: str = "acme") -> str:
    """Run `python -m engram_gateway create-tenant NAME` and return the printed key."""
    out = subprocess.run(
        [sys.executable, "-m", "engram_gateway", "create-tenant", name],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, "create-tenant prints exactly the key"
    return lines[0]


def tenant_of(env: dict[str, str], key: str) -> str:
    """The tenant a key belongs to, from the gateway's key store (keys are `egk_<id>_...`)."""
    gateway_db = f"{env['ENGRAM_DATABASE_PREFIX']}gateway"
    with MongoClient[dict[str, Any]](env["MONGODB_URI"]) as mongo:
        row = mongo[gateway_db]["api_keys"].find_one({"_id": key.split("_")[1]})
    assert row is not None, "the key is in the gateway's database"
    return str(row["tenant_id"])
