"""Creating tenants the way operators do: the gateway's CLI, which prints only the key."""

from __future__ import annotations

import os
import subprocess
import sys


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
