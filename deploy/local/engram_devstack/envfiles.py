"""KEY=value files other tools source; written atomically and readable by the owner only."""

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

_URI_PASSWORD = re.compile(r"(://[^:/@]*):[^@/]*@")


def _write_private(path: Path, text: str) -> None:
    """Replace path in one step, so a reader polling for it never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    """KEY=value lines, one per entry."""
    _write_private(path, "".join(f"{key}={value}\n" for key, value in values.items()))


def read_env_file(path: Path) -> dict[str, str]:
    """The KEY=value lines of a file written by write_env_file."""
    values = {}
    for line in path.read_text().splitlines():
        key, separator, value = line.partition("=")
        if separator and key.strip() and not key.lstrip().startswith("#"):
            values[key.strip()] = value.strip()
    return values


def write_secret(path: Path, secret: str) -> None:
    """A single secret on one line, owner-only."""
    _write_private(path, f"{secret}\n")


def redact_uri(uri: str) -> str:
    """A connection string safe to print: any password replaced by ***."""
    return _URI_PASSWORD.sub(r"\1:***@", uri)
