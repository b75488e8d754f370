"""`engram`: parse the command line, run one command, turn every failure into an exit code."""

from __future__ import annotations

import argparse
import sys

from engram_client.cli import (
    audit,
    dlq,
    docs,
    exit_codes,
    keys,
    knowledge,
    memory,
    misc,
    prune,
    records,
    reindex,
    tenant,
    transfer,
    types,
)
from engram_client.cli.common import UsageError, add_common
from engram_client.cli.output import fail
from engram_client.errors import EngramError

DESCRIPTION = (
    "Operator CLI for Engram. Talks to the gateway at $ENGRAM_URL with $ENGRAM_API_KEY "
    "(or the .engram/run.env that `make run` writes). Results go to stdout (--json for "
    "scripts); progress and errors go to stderr."
)


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree; each module registers its own commands."""
    parser = argparse.ArgumentParser(
        prog="engram",
        description=DESCRIPTION,
        epilog=exit_codes.TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common(parser, top=True)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (
        tenant,
        keys,
        audit,
        docs,
        records,
        types,
        knowledge,
        memory,
        prune,
        dlq,
        reindex,
        transfer,
        misc,
    ):
        module.register(commands)
    for sub in _all_parsers(parser):
        if sub is not parser:
            add_common(sub)
            sub.epilog = sub.epilog or exit_codes.TABLE
            sub.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser in the tree, so each one accepts --json/--url and shows exit codes."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found.extend(_all_parsers(child))
    return found


def main(argv: list[str] | None = None) -> int:
    """Run the command; exit codes are in `engram --help`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except UsageError as exc:
        fail(str(exc), "see `engram <command> --help`")
        return exit_codes.USAGE
    except EngramError as exc:
        fail(str(exc), exit_codes.hint_for(exc))
        return exit_codes.for_error(exc)
    except KeyboardInterrupt:
        fail("interrupted")
        return exit_codes.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
