"""`engram tenant create NAME` and `engram tenant limits`: operator actions run against
MongoDB, not the public API."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from engram_client.cli import exit_codes
from engram_client.cli.output import fail

HELP = (
    "Create a tenant and print only its new API key, an admin key (it manages the tenant's "
    "keys with `engram keys`). This talks to MongoDB directly through "
    "the gateway package (`python -m engram_gateway create-tenant NAME`), so run it where "
    "engram-gateway is installed, with MONGODB_URI (and ENGRAM_DATABASE_PREFIX if used) set "
    "as for the gateway. On the local platform `make tenant name=NAME` does the same."
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `tenant create`."""
    tenant = commands.add_parser("tenant", help="manage tenants (operator, needs MongoDB access)")
    actions = tenant.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create", help="create a tenant and print its API key", description=HELP
    )
    create.add_argument("name", help="display name of the tenant")
    create.add_argument(
        "--ops", action="store_true", help="print a key with the ops role (for `engram dlq`)"
    )
    create.add_argument(
        "--quota",
        action="append",
        default=[],
        metavar="QUOTA=LIMIT",
        help="the tenant's own limit for memories, documents or document_bytes (repeatable)",
    )
    create.set_defaults(handler=create_tenant)
    limits = actions.add_parser(
        "limits",
        help="change an existing tenant's quotas and rate limits",
        description="Set a tenant's own storage quotas and per-class rate limits (the classes "
        "not named keep theirs) and print its limits as JSON. Name the tenant by --tenant ID, "
        "or pipe one of its API keys on stdin. Like `tenant create`, this runs the gateway "
        "package against MongoDB; a running gateway applies the change within its cache time.",
    )
    limits.add_argument("--tenant", metavar="ID", help="the tenant's id (else a key on stdin)")
    limits.add_argument(
        "--quota",
        action="append",
        default=[],
        metavar="QUOTA=LIMIT",
        help="memories, documents or document_bytes (repeatable)",
    )
    limits.add_argument(
        "--rate",
        action="append",
        default=[],
        metavar="CLASS=RATE/BURST",
        help="requests a second and bucket size for write, bulk or read (repeatable)",
    )
    limits.set_defaults(handler=set_limits)


def set_limits(args: argparse.Namespace) -> int:
    """Run the gateway's set-limits command and print what it answered."""
    flags = [
        *(["--tenant", args.tenant] if args.tenant else []),
        *(arg for quota in args.quota for arg in ("--quota", quota)),
        *(arg for rate in args.rate for arg in ("--rate", rate)),
    ]
    done = _gateway_command(["set-limits", *flags], stdin=None if args.tenant else sys.stdin.read())
    if done is None:
        return exit_codes.TIMEOUT
    if done.returncode != 0:
        message = (done.stderr.strip().splitlines() or ["(none)"])[-1]
        fail("could not change the tenant's limits", message)
        return exit_codes.API_ERROR
    print(done.stdout.strip())
    return exit_codes.OK


def _gateway_command(
    arguments: list[str], *, stdin: str | None = None
) -> subprocess.CompletedProcess[str] | None:
    """`python -m engram_gateway ARGUMENTS`; None (after saying why) when it timed out."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "engram_gateway", *arguments],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        fail("the gateway command timed out", "is MongoDB reachable at MONGODB_URI?")
        return None


def create_tenant(args: argparse.Namespace) -> int:
    """Run the gateway's tenant command; stdout carries the key and nothing else."""
    done = _gateway_command(
        [
            "create-tenant",
            args.name,
            *(["--ops"] if args.ops else []),
            *(arg for quota in args.quota for arg in ("--quota", quota)),
        ]
    )
    if done is None:
        return exit_codes.TIMEOUT
    if done.returncode != 0:
        missing = "No module named engram_gateway" in done.stderr
        hint = (
            "install engram-gateway in this environment, or run `make tenant name=NAME`"
            if missing
            else "check MONGODB_URI; the gateway's message was: "
            + (done.stderr.strip().splitlines() or ["(none)"])[-1]
        )
        fail("could not create the tenant", hint)
        return exit_codes.API_ERROR
    key = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if not key:
        fail("the tenant command printed no key", "check the gateway installation")
        return exit_codes.API_ERROR
    print(json.dumps({"api_key": key}) if args.json else key)
    return exit_codes.OK
