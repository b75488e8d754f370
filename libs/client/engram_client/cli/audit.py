"""`engram audit`: the tenant's audit log, newest first (key with the admin role)."""

from __future__ import annotations

import argparse
from datetime import datetime

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import client_from
from engram_client.cli.output import emit

ACTIONS = (
    "memory.edited",
    "memory.expired",
    "fact.asserted",
    "fact.withdrawn",
    "retention.set",
    "import.started",
    "import.finished",
    "export.started",
    "key.created",
    "key.revoked",
    "key.rotated",
)


def aware_time(raw: str) -> datetime:
    """An ISO-8601 time with its timezone (`2026-12-05T17:00:00Z`)."""
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 time: {raw}") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"give a timezone, e.g. {raw}Z")
    return moment


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `audit`."""
    audit = commands.add_parser(
        "audit",
        help="list the tenant's audit log (admin role)",
        description="Prints `AT  ACTION  ACTOR  TARGET  COUNTS` per entry, newest first: every "
        "memory edit and expiry, fact edit, retention change, import, export and key action, "
        "with ids and counts, never content. The API key needs the `admin` role.",
    )
    audit.add_argument("--action", choices=ACTIONS, help="only this action")
    audit.add_argument("--since", type=aware_time, help="entries at or after this time")
    audit.add_argument("--until", type=aware_time, help="entries before this time")
    audit.add_argument("--target", help="only entries naming this id (agent, memory, key...)")
    audit.add_argument("--limit", type=int, default=50, help="stop after N entries")
    audit.set_defaults(handler=list_audit)


def list_audit(args: argparse.Namespace) -> int:
    """Print up to --limit entries across pages."""
    found: list[models.AuditEntry] = []
    with client_from(args) as client:
        for entry in client.iter_audit(
            action=args.action,
            since=args.since,
            until=args.until,
            target=args.target,
            page_size=max(1, min(args.limit, 200)),
        ):
            found.append(entry)
            if len(found) >= args.limit:
                break
    emit(found, args.json, _text)
    return exit_codes.OK


def _text(entries: list[models.AuditEntry]) -> str:
    def line(e: models.AuditEntry) -> str:
        actor = e.actor.key_id or e.actor.kind
        target = " ".join(f"{k}={v}" for k, v in e.target.items()) or "-"
        counts = " ".join(f"{k}={v}" for k, v in e.counts.items()) or "-"
        return f"{e.at.isoformat()}  {e.action}  {actor}({e.actor.role})  {target}  {counts}"

    return "\n".join(line(e) for e in entries)
