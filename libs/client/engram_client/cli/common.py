"""Options every command takes, and the client they configure."""

from __future__ import annotations

import argparse
import json
from typing import Any

from engram_client.retry import RetryPolicy
from engram_client.sync_client import EngramClient


class UsageError(Exception):
    """Bad local input (unreadable file, unparsable rows): exit code 2, nothing was sent."""


def add_common(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """--json/--url/--env-file/--http-timeout, accepted before or after the command name."""
    default: Any = None if top else argparse.SUPPRESS
    group = parser.add_argument_group("connection and output")
    group.add_argument(
        "--json",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="print machine-readable JSON on stdout",
    )
    group.add_argument(
        "--url",
        default=default,
        help="gateway base URL (default: $ENGRAM_URL, then .engram/run.env, then "
        "http://127.0.0.1:8080); the API key comes from $ENGRAM_API_KEY or .engram/run.env",
    )
    group.add_argument(
        "--env-file",
        default=default,
        metavar="PATH",
        help="read ENGRAM_URL and ENGRAM_API_KEY from this KEY=value file",
    )
    group.add_argument(
        "--http-timeout",
        type=float,
        default=30.0 if top else argparse.SUPPRESS,
        metavar="SECONDS",
        help="timeout of each HTTP request (default 30)",
    )


def client_from(args: argparse.Namespace) -> EngramClient:
    """The client for this invocation; retries are on (the CLI is run by scripts too)."""
    return EngramClient(
        args.url,
        env_file=args.env_file,
        timeout=args.http_timeout,
        retry=RetryPolicy(),
    )


def add_wait_timeout(parser: argparse.ArgumentParser, default: float) -> None:
    """--timeout for --wait / --follow."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=default,
        metavar="SECONDS",
        help=f"how long --wait/--follow waits before exiting with code 4 (default {default:g})",
    )


def json_object(raw: str | None, flag: str) -> dict[str, Any]:
    """A flag's JSON object; a usage error (nothing sent) when it is not one."""
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{flag} is not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{flag} must be a JSON object")
    return value
