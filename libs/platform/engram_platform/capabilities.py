"""What the database server does that a store picks its queries by, asked once at start.

MongoDB and the local server (FerretDB v1 on SQLite) differ in what their indexes serve. Stores
ask for a capability, never for the server by name; this module is the one place that tells the
servers apart (FerretDB names its version in `buildInfo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerCapabilities:
    """The database server's answers to what the stores need to know."""

    multikey_indexes: bool
    """An index on a field that holds arrays serves equality on their elements (MongoDB's
    multikey indexes); the local server's do not, so such a lookup decodes every row."""


async def server_capabilities(db: Any) -> ServerCapabilities:
    """The capabilities of the server behind `db` (one `buildInfo` command)."""
    info = await db.command("buildInfo")
    local = "ferretdbVersion" in info
    return ServerCapabilities(multikey_indexes=not local)
