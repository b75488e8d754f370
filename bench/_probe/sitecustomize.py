"""Loaded into every service process of `bench/growth.py` (this directory leads PYTHONPATH).

With ENGRAM_BENCH_MONGO_PROBE naming a directory, a pymongo command listener tallies calls and
client-side seconds per command and collection, and a thread writes the totals to
`<directory>/<pid>.json` every second, so the bench can take differences over a window and see
which query's cost grows with what is stored. Without the variable it does nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

_DIRECTORY = os.environ.get("ENGRAM_BENCH_MONGO_PROBE")


def _collection(event: Any) -> str:
    """The collection a command names (getMore names it apart from its cursor id)."""
    named = event.command.get(
        "collection" if event.command_name == "getMore" else event.command_name
    )
    return named if isinstance(named, str) else ""


def _install(directory: str) -> None:
    """Register the listener and start the writer thread."""
    from pymongo import monitoring

    totals: dict[str, list[float]] = {}
    open_commands: dict[tuple[Any, int], str] = {}
    lock = threading.Lock()

    class Tally(monitoring.CommandListener):
        """Calls and seconds per `command collection`."""

        def started(self, event: monitoring.CommandStartedEvent) -> None:
            key = f"{event.command_name} {_collection(event)}"
            open_commands[(event.connection_id, event.request_id)] = key

        def _ended(self, event: Any) -> None:
            key = open_commands.pop((event.connection_id, event.request_id), None)
            if key is None:
                return
            with lock:
                entry = totals.setdefault(key, [0, 0.0])
                entry[0] += 1
                entry[1] += event.duration_micros / 1e6

        def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
            self._ended(event)

        def failed(self, event: monitoring.CommandFailedEvent) -> None:
            self._ended(event)

    def write() -> None:
        target = os.path.join(directory, f"{os.getpid()}.json")
        while True:
            time.sleep(1.0)
            with lock:
                body = json.dumps(totals)
            with open(f"{target}.tmp", "w") as handle:
                handle.write(body)
            os.replace(f"{target}.tmp", target)

    monitoring.register(Tally())
    threading.Thread(target=write, name="bench-mongo-probe", daemon=True).start()


if _DIRECTORY:
    _install(_DIRECTORY)
