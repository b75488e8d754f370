"""`engram export` and `engram import`: a tenant's agents, memories, documents' metadata and
records to a file and back, with progress (lines and counts per kind) on stderr."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, client_from
from engram_client.cli.output import StatusLine, emit, note
from engram_client.transfer import ExportTally

SHOWN_KINDS = ("agent", "memory", "document", "record")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `export` and `import` (both need an admin key)."""
    export = commands.add_parser(
        "export",
        help="write the tenant's agents, rules, memories, documents and records as NDJSON",
        description="Streams GET /v1/export into FILE (stdout without --out): a manifest, the "
        "agents with their retention rules and memories (active, superseded and expired, with "
        "created_at and edit history), then the "
        "documents' metadata (not their bytes) and every live record with its lineage, a "
        "curator's edit included. With AGENT only that agent and its memories. The last line "
        "is a sha256 of every line before it; `engram import` refuses a file without it. "
        "Progress (lines, MB, counts per kind) goes to stderr. Needs an admin key.",
    )
    export.add_argument("agent_id", metavar="AGENT", nargs="?", help="one agent only")
    export.add_argument("--out", metavar="FILE", help="where to write (default stdout)")
    export.add_argument(
        "--no-knowledge",
        dest="knowledge",
        action="store_false",
        help="leave documents and records out (agents, rules and memories only)",
    )
    export.add_argument(
        "--vectors",
        action="store_true",
        help="add each memory's stored vector: an import into a deployment with the same "
        "embedder stores it as it is instead of embedding again (else it re-embeds)",
    )
    export.set_defaults(handler=export_tenant)

    restore = commands.add_parser(
        "import",
        help="restore an export into this tenant (new ids; safe to run again)",
        description="Sends FILE to POST /v1/import. The gateway checks it whole first, then "
        "creates the agents, writes the memories (keeping created_at) and queues the records "
        "as they were (a curator's as the same edit), all under ids derived from the source, "
        "so a second run writes nothing twice and finishes what a cut run left. Progress "
        "(bytes sent) goes to stderr; the answer counts what was written, found or queued. "
        "Needs an admin key.",
    )
    restore.add_argument("file", metavar="FILE")
    restore.set_defaults(handler=import_tenant)


def export_tenant(args: argparse.Namespace) -> int:
    """Stream the export to a file or stdout; progress as lines and megabytes."""
    status = StatusLine()

    def shown(tally: ExportTally) -> None:
        kinds = ", ".join(f"{tally.kinds[k]} {k}" for k in SHOWN_KINDS if tally.kinds.get(k))
        status.show(f"exported {tally.lines} lines: {kinds} ({tally.size / 1e6:.1f} MB)")

    with _output(args.out) as out, client_from(args) as client:
        tally = client.export_tenant(
            out,
            agent_id=args.agent_id,
            knowledge=args.knowledge,
            vectors=args.vectors,
            on_progress=shown,
        )
    status.close()
    if tally.checksum is None:
        note("the export stream was cut before its checksum line; run it again")
        return exit_codes.API_ERROR
    summary = {"lines": tally.lines, "bytes": tally.size, "counts": tally.checksum["counts"]}
    if args.out:
        emit(summary, args.json, _export_text)
    else:
        note(_export_text(summary))
    return exit_codes.OK


def _export_text(summary: dict[str, Any]) -> str:
    counts = summary["counts"]
    return (
        f"exported {counts.get('agent', 0)} agents, {counts.get('memory', 0)} memories, "
        f"{counts.get('document', 0)} documents, {counts.get('record', 0)} records "
        f"({summary['lines']} lines, {summary['bytes']} bytes, checksum last)"
    )


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[BinaryIO]:
    """The file to write (stdout's bytes without one)."""
    if path is None:
        yield sys.stdout.buffer
        return
    with Path(path).open("wb") as file:
        yield file


def import_tenant(args: argparse.Namespace) -> int:
    """Send the file, showing the upload; then print what the import did."""
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{args.file} is not a readable file")
    status = StatusLine()

    def shown(sent: int, size: int) -> None:
        done = "restoring..." if sent >= size else f"{100 * sent // max(size, 1)}%"
        status.show(f"sent {sent / 1e6:.1f} of {size / 1e6:.1f} MB {done}")

    with client_from(args) as client:
        answer = client.import_tenant(path, on_progress=shown)
    status.close()
    emit(answer, args.json, _import_text)
    return exit_codes.OK


def _import_text(answer: dict[str, Any]) -> str:
    agents = answer["agents"]
    memories = answer["memories"]
    lines = [
        f"from tenant {answer['source_tenant']}: {len(agents['ids'])} agents "
        f"({agents['created']} created), {memories['written']} memories written, "
        f"{memories['present']} already there",
    ]
    records = answer.get("records")
    if records is not None:
        lines.append(
            f"{records['queued']} records and {records['curator_edits']} curator edits queued "
            f"({len(answer['documents']['ids'])} documents)"
        )
    lines += [f"{old} -> {new}" for old, new in agents["ids"].items()]
    return "\n".join(lines)
