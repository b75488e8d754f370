"""`engram reindex --embedder KIND [--wait]`: move the memory store to another embedder (ops role)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from engram_client.cli import exit_codes
from engram_client.cli.common import client_from
from engram_client.cli.output import emit

POLL_SECONDS = 2.0


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `reindex`."""
    command = commands.add_parser(
        "reindex",
        help="re-embed every memory with another embedder, then switch recall (ops role)",
        description="Starts a background reindex of the memory store into a new collection; "
        "recall answers from the old one until the new one is complete and verified. Without "
        "--embedder, prints the latest reindex's progress. With --wait, prints progress until "
        "it ends: exit 0 when it switched, 5 when it failed. Needs a key with the `ops` role.",
    )
    command.add_argument("--embedder", choices=["minilm", "bge-small", "hashing", "openai"])
    command.add_argument("--hashing-dimension", type=int, help="the hashing embedder's size")
    command.add_argument("--wait", action="store_true", help="print progress until it ends")
    command.add_argument(
        "--interval", type=float, default=POLL_SECONDS, help="seconds between --wait's lines"
    )
    command.set_defaults(handler=reindex)


def progress_line(job: dict[str, Any]) -> str:
    """One line of progress: state, done/total, rate, elapsed seconds."""
    if job.get("state") == "none":
        return "no reindex has run"
    line = (
        f"{job['state']}  {job['done']}/{job['total']}  {job['rate']}/s  {job['seconds']} s  "
        f"-> {job['target_collection']} ({job['embedder']})"
    )
    return f"{line}  {job['error']}" if job.get("error") else line


def reindex(args: argparse.Namespace) -> int:
    """Start (or look at) the reindex; with --wait, follow it to the end."""
    with client_from(args) as client:
        if args.embedder:
            job = client.start_reindex(args.embedder, args.hashing_dimension)
        else:
            job = client.reindex_progress()
        emit(job, args.json, progress_line)
        while args.wait and job.get("state") == "running":
            time.sleep(args.interval)
            job = client.reindex_progress()
            emit(job, args.json, progress_line)
    return exit_codes.NOT_VERIFIED if job.get("state") == "failed" else exit_codes.OK
