"""`engram dlq list | replay`: dead letters through the gateway's ops API (key with the ops role)."""

from __future__ import annotations

import argparse

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, client_from
from engram_client.cli.output import emit

NEEDS_OPS = (
    "Uses the gateway's ops API, so the API key needs the `ops` role "
    "(`engram tenant create NAME --ops` prints such a key)."
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `dlq list` and `dlq replay`."""
    dlq = commands.add_parser("dlq", help="list and replay dead-lettered events (ops role)")
    actions = dlq.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser(
        "list",
        help="list the tenant's dead letters, newest first",
        description="Prints `LETTER_ID  CONSUMER  EVENT_TYPE  ERROR_TYPE  REPLAYED` per letter; "
        "the failed payload is never shown. " + NEEDS_OPS,
    )
    listing.add_argument("--consumer", help="only letters of this consumer (service)")
    listing.add_argument("--pending", action="store_true", help="only letters not yet replayed")
    listing.set_defaults(handler=list_letters)

    replay = actions.add_parser(
        "replay",
        help="replay dead letters to their original topics",
        description="Replay the given letters, or every not-yet-replayed letter of --consumer. "
        "A letter is replayed once; repeating reports already_replayed. Exit 0 when every "
        "letter was replayed (or already was), 3 if one is unknown, 1 otherwise. " + NEEDS_OPS,
    )
    chosen = replay.add_mutually_exclusive_group(required=True)
    chosen.add_argument("letter_ids", nargs="*", default=[], metavar="LETTER_ID")
    chosen.add_argument("--consumer", help="replay all of this consumer's pending letters")
    replay.set_defaults(handler=replay_letters)


def list_letters(args: argparse.Namespace) -> int:
    """Print the letters, optionally filtered."""
    with client_from(args) as client:
        letters = client.list_dead_letters()
    shown = [
        letter
        for letter in letters
        if (not args.consumer or letter.consumer == args.consumer)
        and (not args.pending or letter.replayed_at is None)
    ]
    emit(shown, args.json, _letters_text)
    return exit_codes.OK


def _letters_text(letters: list[models.DeadLetter]) -> str:
    return "\n".join(
        f"{x.letter_id}  {x.consumer}  {x.event_type or '-'}  {x.error_type or '-'}  "
        f"{'replayed' if x.replayed_at else 'pending'}"
        for x in letters
    )


def replay_letters(args: argparse.Namespace) -> int:
    """Replay and report each letter's outcome."""
    if not args.letter_ids and not args.consumer:
        raise UsageError("give LETTER_ID... or --consumer")
    results: dict[str, str] = {}
    with client_from(args) as client:
        if args.consumer:
            results = client.replay_dead_letters(consumer=args.consumer)
        for letter_id in args.letter_ids:
            results.update(client.replay_dead_letters(letter_id=letter_id))
    emit(results, args.json, lambda r: "\n".join(f"{k}  {v}" for k, v in sorted(r.items())))
    outcomes = set(results.values())
    if "not_found" in outcomes:
        return exit_codes.NOT_FOUND
    if outcomes - {"replayed", "already_replayed"}:
        return exit_codes.API_ERROR
    return exit_codes.OK
