"""What `make run` keeps under `.engram/` is its owner's alone: logs name tenants, keys and the
internal token are secrets."""

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from engram_devstack.envfiles import write_secret
from engram_devstack.paths import Layout

OWNER_ONLY_UMASK = 0o077
TOKEN_ENV = "ENGRAM_INTERNAL_TOKEN"


def make_private(layout: Layout) -> None:
    """From now on this process and every child it starts creates files 0600 and directories
    0700; directories (and logs) an earlier run left readable are tightened."""
    os.umask(OWNER_ONLY_UMASK)
    for directory in (layout.engram_dir, layout.logs_dir, layout.data_dir):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.chmod(0o700)
    for log in layout.logs_dir.iterdir():
        if log.is_file():
            log.chmod(0o600)


def internal_token(layout: Layout, environ: Mapping[str, str] = os.environ) -> str:
    """The operator's ENGRAM_INTERNAL_TOKEN, else the one generated on the first run and kept
    (0600) in `.engram/internal-token`, so services restarted later still agree."""
    given = environ.get(TOKEN_ENV, "").strip()
    if given:
        return given
    path = layout.internal_token_file
    kept = _read(path)
    if kept:
        return kept
    token = secrets.token_hex(32)
    write_secret(path, token)
    return token


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""
