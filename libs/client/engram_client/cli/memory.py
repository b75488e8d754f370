"""`engram memory store | get | edit | history | recall | list | count | clear | retention |
converse`: an agent's memories."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, add_wait_timeout, client_from, json_object
from engram_client.cli.conversations import add_converse
from engram_client.cli.memory_text import (
    count_text,
    history_text,
    listing_text,
    recall_text,
    status_text,
)
from engram_client.cli.output import emit, note
from engram_client.errors import Conflict

FILTER_HELP = (
    'a JSON object: {"user_id", "session_id", "type", "metadata": {KEY: VALUE | '
    '{"eq"|"in"|"gte"|"lte"|"exists": VALUE}}}, all conditions holding; gte and lte may '
    "share one object and take numbers or ISO-8601 timestamps, e.g. "
    '\'{"metadata": {"priority": {"gte": 2}, "channel": "email"}}\''
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `memory` commands."""
    memory = commands.add_parser(
        "memory",
        help="store, recall, list, count and clear an agent's memories; turn conversations "
        "into memories",
    )
    actions = memory.add_subparsers(dest="action", required=True, metavar="ACTION")
    _add_store(actions)
    _add_get(actions)
    _add_edit(actions)
    _add_history(actions)
    _add_recall(actions)
    _add_list(actions)
    _add_count(actions)
    _add_clear(actions)
    _add_retention(actions)
    add_converse(actions)


def _add_store(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    store = actions.add_parser(
        "store",
        help="store a memory",
        description="Store TEXT (or stdin when TEXT is -) as a memory of AGENT; prints the "
        "memory id. When a live memory in the same scope (--user, --session) already holds the "
        "same content (ignoring case and spacing), nothing is stored: its id is printed and "
        "stderr says it was deduplicated. --wait waits until the memory is no longer pending "
        "and exits 1 if it was rejected.",
    )
    store.add_argument("agent_id", metavar="AGENT")
    store.add_argument("text", metavar="TEXT", help="the memory's content, or - for stdin")
    store.add_argument("--type", default="conversation", help="memory type (default conversation)")
    store.add_argument("--metadata", help="a JSON object of metadata")
    store.add_argument(
        "--derived-from", action="append", default=[], metavar="ID", help="repeatable"
    )
    store.add_argument("--supersedes", metavar="MEMORY_ID")
    store.add_argument("--user", metavar="USER_ID", help="the end user this memory is about")
    store.add_argument("--session", metavar="SESSION_ID", help="the session it came from")
    store.add_argument(
        "--allow-duplicate",
        action="store_true",
        help="store it even if a live memory in this scope says the same",
    )
    _add_expiry(store, "it expires")
    store.add_argument("--idempotency-key", help="reuse to make a re-run a no-op")
    store.add_argument("--wait", action="store_true", help="wait until stored")
    add_wait_timeout(store, 60)
    store.set_defaults(handler=store_memory)


def _add_expiry(parser: argparse.ArgumentParser, what: str) -> None:
    """`--ttl` or `--expires-at` (not both): when the memory leaves recall and listings."""
    expiry = parser.add_mutually_exclusive_group()
    expiry.add_argument(
        "--ttl",
        type=int,
        metavar="SECONDS",
        help=f"{what} this many seconds from now (leaves recall and listings, status expired)",
    )
    expiry.add_argument(
        "--expires-at",
        metavar="TIME",
        help=f"{what} at this ISO-8601 time with a timezone, e.g. 2027-01-31T18:00:00Z",
    )


def _add_get(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    get = actions.add_parser("get", help="show one memory")
    get.add_argument("agent_id", metavar="AGENT")
    get.add_argument("memory_id", metavar="MEMORY_ID")
    get.set_defaults(handler=get_memory)


def _add_edit(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    edit = actions.add_parser(
        "edit",
        help="edit a memory (a new version superseding it)",
        description="Write a new version of MEMORY_ID with TEXT (or stdin when TEXT is -) "
        "and/or --metadata (replacing the old metadata whole); the old version stays, "
        "`superseded`. Prints the new memory id. Exits 1 with the newer version's id when "
        "MEMORY_ID is no longer the live version.",
    )
    edit.add_argument("agent_id", metavar="AGENT")
    edit.add_argument("memory_id", metavar="MEMORY_ID")
    edit.add_argument("text", metavar="TEXT", nargs="?", help="the new content, or - for stdin")
    edit.add_argument("--metadata", help="a JSON object replacing the metadata")
    edit.add_argument("--reason", help="why (at most 500 characters)")
    _add_expiry(edit, "the new version expires")
    edit.add_argument("--wait", action="store_true", help="wait until stored")
    add_wait_timeout(edit, 60)
    edit.set_defaults(handler=edit_memory)


def _add_history(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    history = actions.add_parser(
        "history", help="every version of a memory: who wrote each, when and why"
    )
    history.add_argument("agent_id", metavar="AGENT")
    history.add_argument("memory_id", metavar="MEMORY_ID")
    history.set_defaults(handler=memory_history)


def _add_recall(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    recall = actions.add_parser(
        "recall",
        help="recall memories relevant to a query",
        description="Prints a header, then `FUSED  DENSE  LEXICAL  MEMORY_ID  CONTENT` per hit "
        "in fused order (LEXICAL is - for a hit that was no lexical candidate), then how many "
        "hits the floor dropped; the floor (--min-score) applies to the dense score.",
    )
    recall.add_argument("agent_id", metavar="AGENT")
    recall.add_argument("query", metavar="QUERY")
    recall.add_argument("--top-k", type=int, default=5, help="at most this many hits (default 5)")
    recall.add_argument("--min-score", type=float, help="drop hits whose dense score is below")
    recall.add_argument("--type", dest="types", action="append", help="only this type (repeat)")
    recall.add_argument(
        "--mode",
        choices=("hybrid", "dense", "lexical"),
        help="hybrid fuses dense (meaning) and lexical (words) retrieval (the default)",
    )
    _add_scope_filter(recall)
    recall.add_argument(
        "--recency-half-life",
        type=float,
        metavar="DAYS",
        help="favour newer memories: a hit's fused score halves for every DAYS of its age",
    )
    recall.set_defaults(handler=recall_memories)


def _add_list(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = actions.add_parser(
        "list",
        help="list memories, one page or --all",
        description="Prints `MEMORY_ID  STATUS  TYPE  CONTENT` per memory (prefixed by the agent "
        "when AGENT is left out, which lists across all of this key's agents). Without --all, "
        "one page; when there is more, stderr gives the --cursor of the next. --json prints "
        '{"memories": [...], "next_cursor": ...}.',
    )
    listing.add_argument("agent_id", nargs="?", metavar="AGENT", help="default: every agent")
    _add_selection(listing)
    listing.add_argument(
        "--order",
        choices=("oldest", "recent"),
        help="oldest first (the default) or most recent first",
    )
    listing.add_argument(
        "--limit", type=int, metavar="N", help="memories per page, 1-1000 (default 100)"
    )
    pages = listing.add_mutually_exclusive_group()
    pages.add_argument("--cursor", help="start at this page (a previous listing's next cursor)")
    pages.add_argument("--all", action="store_true", help="follow the cursor to the last page")
    listing.set_defaults(handler=list_memories)


def _add_count(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    count = actions.add_parser(
        "count",
        help="count memories",
        description="Prints how many memories `memory list` would show for the same options, "
        "then the counts by status and by type.",
    )
    count.add_argument("agent_id", metavar="AGENT")
    _add_selection(count)
    count.set_defaults(handler=count_memories)


def _add_clear(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    clear = actions.add_parser(
        "clear",
        help="withdraw an agent's memories (all, or of one user/session)",
        description="Withdraw every live memory of AGENT, or only those of --user and/or "
        "--session. Withdrawn memories are no longer recalled; this cannot be undone, so it "
        "needs --yes. Prints how many were withdrawn.",
    )
    clear.add_argument("agent_id", metavar="AGENT")
    clear.add_argument("--user", metavar="USER_ID", help="only this end user's memories")
    clear.add_argument("--session", metavar="SESSION_ID", help="only this session's memories")
    clear.add_argument("--yes", action="store_true", help="confirm: really withdraw them")
    clear.set_defaults(handler=clear_memories)


def _add_selection(parser: argparse.ArgumentParser) -> None:
    """What a listing and a count select by."""
    parser.add_argument("--search", metavar="TEXT", help="content holding TEXT (literal, any case)")
    parser.add_argument("--type", help="only this memory type")
    parser.add_argument(
        "--status",
        choices=("pending", "active", "superseded", "withdrawn", "rejected", "expired"),
        help="only memories in this status",
    )
    _add_scope_filter(parser)


def _add_scope_filter(parser: argparse.ArgumentParser) -> None:
    """--user, --session and --filter, merged into one filter."""
    parser.add_argument("--user", metavar="USER_ID", help="only memories of this end user")
    parser.add_argument("--session", metavar="SESSION_ID", help="only memories of this session")
    parser.add_argument("--filter", metavar="JSON", help=FILTER_HELP)


def scope_filter(args: argparse.Namespace) -> dict[str, Any] | None:
    """--filter with --user and --session merged in; a field given twice must agree."""
    wanted = json_object(args.filter, "--filter")
    given = (("user_id", "--user", args.user), ("session_id", "--session", args.session))
    for name, flag, value in given:
        if value is None:
            continue
        if wanted.get(name, value) != value:
            raise UsageError(f"{flag} {value!r} contradicts --filter's {name} {wanted[name]!r}")
        wanted[name] = value
    return wanted or None


def _add_retention(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    retention = actions.add_parser(
        "retention",
        help="show or set an agent's retention rules",
        description="Print AGENT's retention rules and the defaults for its other types as "
        "JSON; --set replaces its rules with RULES, a JSON list of "
        '{"type", "max_count"?, "max_age_seconds"?} (one per type; [] returns it to the '
        "defaults), which apply from its next stored memory on.",
    )
    retention.add_argument("agent_id", metavar="AGENT")
    retention.add_argument("--set", dest="rules", metavar="RULES", help="a JSON list of rules")
    retention.set_defaults(handler=agent_retention)


def agent_retention(args: argparse.Namespace) -> int:
    """Print the agent's retention, after replacing its rules when --set is given."""
    rules = None if args.rules is None else _rules(args.rules)
    with client_from(args) as client:
        if rules is None:
            shown = client.get_retention(args.agent_id)
        else:
            shown = client.set_retention(args.agent_id, rules)
    emit(shown, True)
    return exit_codes.OK


def _rules(text: str) -> list[dict[str, Any]]:
    """`--set` as a list of JSON objects; a usage error otherwise."""
    try:
        rules = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--set is not JSON: {exc.msg}") from None
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise UsageError("--set must be a JSON list of objects")
    return rules


def store_memory(args: argparse.Namespace) -> int:
    """Write the memory; optionally wait for its final status."""
    text = sys.stdin.read() if args.text == "-" else args.text
    metadata = json_object(args.metadata, "--metadata")
    expires_at = _instant(args.expires_at)
    with client_from(args) as client:
        accepted = client.write_memory(
            args.agent_id,
            text,
            type=args.type,
            metadata=metadata,
            derived_from=args.derived_from,
            supersedes=args.supersedes,
            idempotency_key=args.idempotency_key,
            user_id=args.user,
            session_id=args.session,
            allow_duplicate=args.allow_duplicate,
            ttl_seconds=args.ttl,
            expires_at=expires_at,
        )
        if accepted.deduplicated:
            note(
                f"deduplicated: {accepted.memory_id} ({accepted.status}) already holds this "
                "content; --allow-duplicate stores another"
            )
        if not args.wait:
            emit(accepted, args.json, lambda a: a.memory_id)
            return exit_codes.OK
        memory = client.wait_for_memory(args.agent_id, accepted.memory_id, args.timeout)
    emit(memory, args.json, status_text)
    return exit_codes.API_ERROR if memory.status == "rejected" else exit_codes.OK


def _instant(text: str | None) -> datetime | None:
    """`--expires-at` as a timezone-aware instant; a usage error otherwise."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--expires-at: {text!r} is not an ISO-8601 time") from None
    if moment.tzinfo is None:
        raise UsageError("--expires-at needs a timezone, e.g. 2027-01-31T18:00:00Z")
    return moment


def get_memory(args: argparse.Namespace) -> int:
    """Print one memory."""
    with client_from(args) as client:
        memory = client.get_memory(args.agent_id, args.memory_id)
    emit(memory, True)
    return exit_codes.OK


def edit_memory(args: argparse.Namespace) -> int:
    """Write the new version; optionally wait for its final status."""
    text = sys.stdin.read() if args.text == "-" else args.text
    metadata = json_object(args.metadata, "--metadata") if args.metadata is not None else None
    expires_at = _instant(args.expires_at)
    if text is None and metadata is None and args.ttl is None and expires_at is None:
        raise UsageError("give TEXT, --metadata, --ttl or --expires-at")
    with client_from(args) as client:
        try:
            accepted = client.update_memory(
                args.agent_id,
                args.memory_id,
                content=text,
                metadata=metadata,
                reason=args.reason,
                ttl_seconds=args.ttl,
                expires_at=expires_at,
            )
        except Conflict as stale:
            if stale.superseded_by:
                note(f"{args.memory_id} is no longer the live version: edit {stale.superseded_by}")
            raise
        if not args.wait:
            emit(accepted, args.json, lambda a: a.memory_id)
            return exit_codes.OK
        memory = client.wait_for_memory(args.agent_id, accepted.memory_id, args.timeout)
    emit(memory, args.json, status_text)
    return exit_codes.API_ERROR if memory.status == "rejected" else exit_codes.OK


def memory_history(args: argparse.Namespace) -> int:
    """Print every version of the memory's chain, oldest first."""
    with client_from(args) as client:
        history = client.memory_history(args.agent_id, args.memory_id)
    emit(history, args.json, history_text)
    return exit_codes.OK


def recall_memories(args: argparse.Namespace) -> int:
    """Print the hits at or above the floor."""
    wanted = scope_filter(args)
    with client_from(args) as client:
        result = client.recall(
            args.agent_id,
            args.query,
            top_k=args.top_k,
            min_score=args.min_score,
            types=args.types,
            mode=args.mode,
            filter=wanted,
            recency_half_life_days=args.recency_half_life,
        )
    emit(result, args.json, recall_text)
    return exit_codes.OK


def _selection(args: argparse.Namespace) -> dict[str, Any]:
    """The client's keyword arguments for what `list` and `count` select."""
    return {
        "search": args.search,
        "type": args.type,
        "status": args.status,
        "filter": scope_filter(args),
    }


def list_memories(args: argparse.Namespace) -> int:
    """Print one page, or every page with --all."""
    with client_from(args) as client:
        if args.all:
            found = client.iter_memories(
                args.agent_id, **_selection(args), order=args.order, page_size=args.limit
            )
            page = models.MemoryPage(memories=list(found))
        else:
            page = client.list_memories(
                args.agent_id,
                **_selection(args),
                cursor=args.cursor,
                limit=args.limit,
                order=args.order,
            )
    emit(page, args.json, lambda p: listing_text(p, across_agents=args.agent_id is None))
    if page.next_cursor:
        note(f"more memories: add --cursor {page.next_cursor} (or --all for every page)")
    return exit_codes.OK


def count_memories(args: argparse.Namespace) -> int:
    """Print the total, then per status and per type."""
    with client_from(args) as client:
        counted = client.count_memories(args.agent_id, **_selection(args))
    emit(counted, args.json, count_text)
    return exit_codes.OK


def clear_memories(args: argparse.Namespace) -> int:
    """Withdraw the agent's memories (or one scope's) once confirmed with --yes."""
    if not args.yes:
        raise UsageError(f"this withdraws {_clearing(args)} for good; add --yes to confirm")
    with client_from(args) as client:
        cleared = client.clear_memories(args.agent_id, user_id=args.user, session_id=args.session)
    emit(cleared, args.json, lambda c: f"{c.withdrawn} withdrawn")
    return exit_codes.OK


def _clearing(args: argparse.Namespace) -> str:
    """What `clear` would withdraw, in words."""
    given = (("user", args.user), ("session", args.session))
    scope = [f"{name} {value}" for name, value in given if value]
    if not scope:
        return f"every memory of {args.agent_id}"
    return f"{args.agent_id}'s memories of {' and '.join(scope)}"
