"""`engram keys list | create | revoke | rotate`: the tenant's API keys (key with the admin role)."""

from __future__ import annotations

import argparse

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import client_from
from engram_client.cli.output import emit

NEEDS_ADMIN = (
    "The API key needs the `admin` role (a tenant's first key, from `engram tenant create`, "
    "has it)."
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `keys list`, `keys create`, `keys revoke` and `keys rotate`."""
    keys = commands.add_parser("keys", help="manage the tenant's API keys (admin role)")
    actions = keys.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser(
        "list",
        help="list the tenant's keys",
        description="Prints `KEY_ID  ROLE  NAME  CREATED  LAST_USED  REVOKED` per key; "
        "secrets are never shown. " + NEEDS_ADMIN,
    )
    listing.set_defaults(handler=list_keys)

    create = actions.add_parser(
        "create",
        help="issue a key and print it (shown once)",
        description="Prints only the new key (with --json: the key and its id). " + NEEDS_ADMIN,
    )
    create.add_argument("--role", choices=("default", "admin", "curator"), default="default")
    create.add_argument("--name", help="a label for the key")
    create.set_defaults(handler=create_key)

    revoke = actions.add_parser(
        "revoke",
        help="revoke a key (refused for the tenant's last admin key)",
        description="Every gateway refuses the key within a second. " + NEEDS_ADMIN,
    )
    revoke.add_argument("key_id", metavar="KEY_ID")
    revoke.set_defaults(handler=revoke_key)

    rotate = actions.add_parser(
        "rotate",
        help="replace a key: print the new one, revoke the old one at once",
        description="The new key has the old one's role and name. " + NEEDS_ADMIN,
    )
    rotate.add_argument("key_id", metavar="KEY_ID")
    rotate.set_defaults(handler=rotate_key)


def list_keys(args: argparse.Namespace) -> int:
    """Print the tenant's keys."""
    with client_from(args) as client:
        emit(client.list_keys(), args.json, _keys_text)
    return exit_codes.OK


def _keys_text(keys: list[models.ApiKey]) -> str:
    def when(value: object) -> str:
        return str(value) if value is not None else "-"

    return "\n".join(
        f"{k.key_id}  {k.role}  {k.name or '-'}  {when(k.created_at)}  "
        f"{when(k.last_used_at)}  {when(k.revoked_at)}"
        for k in keys
    )


def create_key(args: argparse.Namespace) -> int:
    """Issue a key; stdout carries only the key unless --json."""
    with client_from(args) as client:
        issued = client.create_key(args.role, args.name)
    emit(issued, args.json, lambda k: k.key)
    return exit_codes.OK


def revoke_key(args: argparse.Namespace) -> int:
    """Revoke a key and print its id."""
    with client_from(args) as client:
        revoked = client.revoke_key(args.key_id)
    emit(revoked, args.json, lambda k: f"{k.key_id}  revoked {k.revoked_at}")
    return exit_codes.OK


def rotate_key(args: argparse.Namespace) -> int:
    """Rotate a key; stdout carries only the new key unless --json."""
    with client_from(args) as client:
        issued = client.rotate_key(args.key_id)
    emit(issued, args.json, lambda k: k.key)
    return exit_codes.OK
