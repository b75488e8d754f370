"""`engram types list | get | put | delete`: the tenant's record types (changes need an admin key)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, client_from
from engram_client.cli.output import emit

NEEDS_ADMIN = "The API key needs the `admin` role."


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `types list`, `types get`, `types put` and `types delete`."""
    types = commands.add_parser("types", help="the record types documents are extracted with")
    actions = types.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser(
        "list",
        help="list the types in force",
        description="Prints `NAME  ORIGIN  VERSION` per type: `bundled` (the service's file) "
        "or `tenant` (declared with `engram types put`).",
    )
    listing.set_defaults(handler=list_types)

    get = actions.add_parser(
        "get",
        help="print a type's definition",
        description="The definition in force as JSON; --version N for the tenant's version N, "
        "--versions for every version.",
    )
    get.add_argument("name", metavar="NAME")
    which = get.add_mutually_exclusive_group()
    which.add_argument("--version", type=int, help="one of the tenant's versions")
    which.add_argument("--versions", action="store_true", help="every version, oldest first")
    get.set_defaults(handler=get_type)

    put = actions.add_parser(
        "put",
        help="declare the tenant's next version of a type",
        description="Reads the definition (a JSON object: id_fields, required_fields, "
        "single_valued) from FILE, or stdin with `-`; documents extracted from now on use it. "
        + NEEDS_ADMIN,
    )
    put.add_argument("name", metavar="NAME")
    put.add_argument("file", metavar="FILE", help="the definition as JSON, `-` for stdin")
    put.set_defaults(handler=put_type)

    delete = actions.add_parser(
        "delete",
        help="retire the tenant's definition (the bundled one applies again)",
        description="Its versions are kept. " + NEEDS_ADMIN,
    )
    delete.add_argument("name", metavar="NAME")
    delete.set_defaults(handler=delete_type)


def _one_line(t: models.RecordType) -> str:
    return f"{t.name}  {t.origin}  {t.version}{'  retired' if t.retired else ''}"


def list_types(args: argparse.Namespace) -> int:
    """Print the types in force."""
    with client_from(args) as client:
        found = client.list_types()
    emit(found, args.json, lambda ts: "\n".join(_one_line(t) for t in ts))
    return exit_codes.OK


def get_type(args: argparse.Namespace) -> int:
    """Print a type (its definition as JSON), one version, or its versions."""
    with client_from(args) as client:
        if args.versions:
            history = client.type_versions(args.name)
            emit(history, args.json, lambda h: "\n".join(_one_line(v) for v in h.versions))
            return exit_codes.OK
        found = client.get_type(args.name, args.version)
    emit(found, True)
    return exit_codes.OK


def _definition(source: str) -> dict[str, Any]:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{source}: not JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise UsageError(f"{source}: a type definition is a JSON object")
    return parsed


def put_type(args: argparse.Namespace) -> int:
    """Declare a new version and print it."""
    definition = _definition(args.file)
    with client_from(args) as client:
        declared = client.put_type(args.name, definition)
    emit(declared, args.json, _one_line)
    return exit_codes.OK


def delete_type(args: argparse.Namespace) -> int:
    """Retire the tenant's definition and print the retiring version."""
    with client_from(args) as client:
        retired = client.delete_type(args.name)
    emit(retired, args.json, _one_line)
    return exit_codes.OK
