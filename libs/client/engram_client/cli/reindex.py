"""`engram reindex --embedder KIND [--store S] [--wait]`: move the memory and knowledge stores
to another embedder (ops role)."""

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
        help="re-embed every memory and knowledge item with another embedder, then switch "
        "recall and search (ops role)",
        description="Starts a background reindex of the memory and knowledge stores (or the "
        "--store named) into new collections; recall and knowledge search answer from the old "
        "ones until the new ones are complete and verified. Without --embedder, prints the "
        "latest reindex's progress, each store's on a line of its own. With --wait, prints "
        "progress until it ends: exit 0 when it switched, 5 when a store failed. Needs a key "
        "with the `ops` role.",
    )
    command.add_argument("--embedder", choices=["minilm", "bge-small", "hashing", "openai"])
    command.add_argument("--hashing-dimension", type=int, help="the hashing embedder's size")
    command.add_argument(
        "--store",
        action="append",
        choices=["memory", "knowledge"],
        dest="stores",
        help="a store to move (repeatable; default: both)",
    )
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


def store_line(store: str, job: dict[str, Any]) -> str:
    """A store's line under the overall one: its progress, or why it has none."""
    if "done" in job:
        eta = job.get("eta_seconds")
        return f"  {store}: {progress_line(job)}" + (f"  eta {eta} s" if eta is not None else "")
    if job.get("state") == "none":
        return f"  {store}: no reindex has run"
    reason = f"  {job['error']}" if job.get("error") else ""
    return f"  {store}: {job.get('state')}{reason}"


def progress_lines(view: dict[str, Any]) -> str:
    """The overall progress, then each store's (a single store's view as one line)."""
    stores: dict[str, dict[str, Any]] = view.get("stores") or {}
    if not stores:
        return progress_line(view)
    eta = view.get("eta_seconds")
    overall = (
        f"{view['state']}  {view['done']}/{view['total']}  {view['rate']}/s  {view['seconds']} s"
        + (f"  eta {eta} s" if eta is not None else "")
    )
    return "\n".join([overall, *(store_line(name, job) for name, job in stores.items())])


def reindex(args: argparse.Namespace) -> int:
    """Start (or look at) the reindex; with --wait, follow it to the end."""
    with client_from(args) as client:
        if args.embedder:
            job = client.start_reindex(args.embedder, args.hashing_dimension, args.stores)
        else:
            job = client.reindex_progress()
        emit(job, args.json, progress_lines)
        while args.wait and job.get("state") == "running":
            time.sleep(args.interval)
            job = client.reindex_progress()
            emit(job, args.json, progress_lines)
    return exit_codes.NOT_VERIFIED if job.get("state") == "failed" else exit_codes.OK
