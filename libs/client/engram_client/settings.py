"""Where the gateway is and which key to use: arguments, then environment, then `.engram/run.env`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engram_client.errors import EngramError

DEFAULT_URL = "http://127.0.0.1:8080"
RUN_ENV = Path(".engram") / "run.env"


@dataclass(frozen=True)
class Connection:
    """The resolved gateway address and API key (the key is never printed by repr)."""

    base_url: str
    api_key: str | None

    def __repr__(self) -> str:
        return f"Connection(base_url={self.base_url!r}, api_key={'***' if self.api_key else None})"


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=value lines as `make run` writes them; comments and blank lines are skipped."""
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        key, separator, value = line.partition("=")
        if separator and key.strip() and not key.lstrip().startswith("#"):
            values[key.strip()] = value.strip().strip('"').strip("'")
    return values


def find_run_env(start: Path | None = None) -> Path | None:
    """The nearest `.engram/run.env` in the working directory or one of its parents."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / RUN_ENV
        if candidate.is_file():
            return candidate
    return None


def resolve_connection(
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    env_file: Path | str | None = None,
) -> Connection:
    """Explicit values win; then ENGRAM_URL / ENGRAM_API_KEY; then the run.env `make run` wrote."""
    environ = os.environ if env is None else env
    url = base_url or environ.get("ENGRAM_URL")
    key = api_key or environ.get("ENGRAM_API_KEY")
    if url is None or key is None:
        path = Path(env_file) if env_file is not None else find_run_env()
        if env_file is not None and not Path(env_file).is_file():
            raise EngramError(f"env file {env_file} does not exist", type="/problems/client-config")
        file_values = read_env_file(path) if path is not None else {}
        url = url or file_values.get("ENGRAM_URL")
        key = key or file_values.get("ENGRAM_API_KEY")
    return Connection((url or DEFAULT_URL).rstrip("/"), key or None)
