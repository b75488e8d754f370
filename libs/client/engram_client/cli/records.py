"""`engram records import | get | list`: structured rows, the non-AI import path."""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, client_from
from engram_client.cli.output import ProgressBar, emit

BATCH_ROWS = 10_000
"""The gateway accepts at most this many rows per import; bigger files are sent in batches."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `records` commands."""
    records = commands.add_parser("records", help="import and read records")
    actions = records.add_subparsers(dest="action", required=True, metavar="ACTION")

    imp = actions.add_parser(
        "import",
        help="import rows from a CSV or JSON file",
        description="Import rows as records of one type. CSV: a header row. JSON: a list of "
        'objects, or {"rows": [...]}; NDJSON (.ndjson/.jsonl): one object per line. Values '
        "must be scalars. Prints one import id per batch of 10000 rows.",
    )
    imp.add_argument("file", type=Path, metavar="FILE", help="a .csv, .json, .ndjson file")
    imp.add_argument(
        "--type",
        dest="record_type",
        help="record type (default: the file name stem in the singular, e.g. carriers → carrier)",
    )
    imp.add_argument("--key-field", help="the column holding each row's entity key (default id)")
    imp.add_argument("--source", help="source name recorded as lineage (default: the file name)")
    imp.set_defaults(handler=import_file)

    get = actions.add_parser("get", help="show one record with revisions and lineage")
    get.add_argument("record_id", metavar="ID")
    get.set_defaults(handler=get_record)

    listing = actions.add_parser("list", help="list records (all pages)")
    listing.add_argument("--type", dest="record_type", help="only this record type")
    listing.add_argument("--document-id", help="only records from this document")
    listing.add_argument("--entity-id", help="only records about this entity")
    listing.add_argument("--limit", type=int, default=100, help="stop after N records")
    listing.set_defaults(handler=list_records)


def singular_type(path: Path) -> str:
    """`carriers.csv` → `carrier`, reduced to the gateway's record type pattern."""
    stem = re.sub(r"[^a-z0-9_]+", "_", path.stem.lower()).strip("_")
    if stem.endswith("ies"):
        stem = stem[:-3] + "y"
    elif stem.endswith("s") and not stem.endswith("ss"):
        stem = stem[:-1]
    if not stem or not stem[0].isalpha():
        raise UsageError(f"cannot derive a record type from {path.name}; pass --type")
    return stem


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows from CSV, JSON or NDJSON; a usage error when the file can't be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    suffix = path.suffix.lower()
    try:
        if suffix in {".csv", ".tsv"}:
            dialect = "excel-tab" if suffix == ".tsv" else "excel"
            return [dict(row) for row in csv.DictReader(text.splitlines(), dialect=dialect)]
        if suffix in {".ndjson", ".jsonl"}:
            rows: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            rows = json.loads(text)
    except (csv.Error, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot parse {path}: {exc}") from None
    if isinstance(rows, dict) and isinstance(rows.get("rows"), list):
        rows = rows["rows"]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise UsageError(f'{path} must hold a list of objects (or {{"rows": [...]}})')
    return rows


def import_file(args: argparse.Namespace) -> int:
    """Send the rows in batches, each with its own idempotency key reused on retries."""
    rows = read_rows(args.file)
    if not rows:
        raise UsageError(f"{args.file} has no rows")
    record_type = args.record_type or singular_type(args.file)
    batches = [rows[i : i + BATCH_ROWS] for i in range(0, len(rows), BATCH_ROWS)]
    accepted: list[models.ImportAccepted] = []
    bar = ProgressBar(len(batches), "importing")
    bar.draw()
    with client_from(args) as client:
        for batch in batches:
            accepted.append(
                client.import_records(
                    record_type,
                    batch,
                    source=args.source or args.file.name,
                    key_field=args.key_field,
                )
            )
            bar.advance(f"{len(batch)} rows")
    bar.close()
    emit(accepted, args.json, lambda items: "\n".join(a.import_id for a in items))
    return exit_codes.OK


def get_record(args: argparse.Namespace) -> int:
    """Print one record."""
    with client_from(args) as client:
        record = client.get_record(args.record_id)
    emit(record, True)
    return exit_codes.OK


def list_records(args: argparse.Namespace) -> int:
    """Print up to --limit records across pages."""
    found: list[models.Record] = []
    with client_from(args) as client:
        for record in client.iter_records(
            type=args.record_type,
            document_id=args.document_id,
            entity_id=args.entity_id,
            page_size=min(args.limit, 1000),
        ):
            found.append(record)
            if len(found) >= args.limit:
                break
    emit(
        found,
        args.json,
        lambda items: "\n".join(f"{r.record_id}  {r.record_type}  {r.entity_id}" for r in items),
    )
    return exit_codes.OK
