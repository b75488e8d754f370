"""Tenant API keys, minted by the gateway's own CLI so the devstack never touches its storage."""

import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from engram_devstack.errors import DevstackError


def create_tenant(
    name: str, env: Mapping[str, str], cwd: Path, timeout: float = 120.0, *, ops: bool = False
) -> str:
    """Run `python -m engram_gateway create-tenant NAME [--ops]`; its stdout's last line is the
    key (with `ops`, a key carrying the ops role, which the dashboard asks for)."""
    command = [sys.executable, "-m", "engram_gateway", "create-tenant", name]
    try:
        result = subprocess.run(
            [*command, "--ops"] if ops else command,
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as error:
        raise DevstackError(f"create-tenant {name} did not finish in {timeout:.0f}s") from error
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    if result.returncode != 0 or not lines:
        details = "\n".join(result.stderr.strip().splitlines()[-10:])
        raise DevstackError(
            f"`{' '.join(command[1:])}{' --ops' if ops else ''}` failed "
            f"(exit {result.returncode}, {len(lines)} stdout lines):\n{details}"
        )
    return lines[-1]


def key_rejected(base_url: str, key: str, timeout: float = 5.0) -> bool:
    """True only when the gateway answers 401/403 to the key, e.g. after its data was wiped."""
    request = urllib.request.Request(
        f"{base_url}/v1/agents", headers={"Authorization": f"Bearer {key}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return False
    except urllib.error.HTTPError as error:
        return error.code in (401, 403)
    except OSError:
        return False
