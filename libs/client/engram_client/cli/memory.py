"""`engram memory store | get | recall`: an agent's memories."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, add_wait_timeout, client_from
from engram_client.cli.output import emit, note

FILTER_HELP = (
    'a JSON object: {"user_id", "session_id", "type", "metadata": {KEY: VALUE | '
    '{"eq"|"in"|"gte"|"lte"|"exists": VALUE}}}, all conditions holding; gte and lte may '
    "share one object and take numbers or ISO-8601 timestamps, e.g. "
    '\'{"metadata": {"priority": {"gte": 2}, "channel": "email"}}\''
)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `memory` commands."""
    memory = commands.add_parser("memory", help="store and recall an agent's memories")
    actions = memory.add_subparsers(dest="action", required=True, metavar="ACTION")
    _add_store(actions)
    _add_get(actions)
    _add_recall(actions)


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
    store.add_argument("--idempotency-key", help="reuse to make a re-run a no-op")
    store.add_argument("--wait", action="store_true", help="wait until stored")
    add_wait_timeout(store, 60)
    store.set_defaults(handler=store_memory)


def _add_get(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    get = actions.add_parser("get", help="show one memory")
    get.add_argument("agent_id", metavar="AGENT")
    get.add_argument("memory_id", metavar="MEMORY_ID")
    get.set_defaults(handler=get_memory)


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


def _add_scope_filter(parser: argparse.ArgumentParser) -> None:
    """--user, --session and --filter, merged into one filter."""
    parser.add_argument("--user", metavar="USER_ID", help="only memories of this end user")
    parser.add_argument("--session", metavar="SESSION_ID", help="only memories of this session")
    parser.add_argument("--filter", metavar="JSON", help=FILTER_HELP)


def _json_object(raw: str | None, flag: str) -> dict[str, Any]:
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


def scope_filter(args: argparse.Namespace) -> dict[str, Any] | None:
    """--filter with --user and --session merged in; a field given twice must agree."""
    wanted = _json_object(args.filter, "--filter")
    given = (("user_id", "--user", args.user), ("session_id", "--session", args.session))
    for name, flag, value in given:
        if value is None:
            continue
        if wanted.get(name, value) != value:
            raise UsageError(f"{flag} {value!r} contradicts --filter's {name} {wanted[name]!r}")
        wanted[name] = value
    return wanted or None


def store_memory(args: argparse.Namespace) -> int:
    """Write the memory; optionally wait for its final status."""
    text = sys.stdin.read() if args.text == "-" else args.text
    metadata = _json_object(args.metadata, "--metadata")
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


def status_text(memory: models.Memory) -> str:
    """The id and status, and for a rejection why (a duplicate names the memory it repeats)."""
    if memory.duplicate_of:
        return f"{memory.memory_id}  {memory.status}  duplicate of {memory.duplicate_of}"
    return "  ".join(filter(None, (memory.memory_id, memory.status, memory.reason)))


def get_memory(args: argparse.Namespace) -> int:
    """Print one memory."""
    with client_from(args) as client:
        memory = client.get_memory(args.agent_id, args.memory_id)
    emit(memory, True)
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


RECALL_HEADER = f"{'FUSED':>7}  {'DENSE':>7}  {'LEXICAL':>7}  MEMORY_ID  CONTENT"


def recall_text(result: models.Recall) -> str:
    """Each hit's scores, id and content under a header, then what the floor dropped."""
    rows = [_hit_line(hit) for hit in result.results]
    header = [RECALL_HEADER] if rows else []
    summary = f"({len(rows)} hit(s), {result.mode}; {result.dropped_below_floor} below the floor)"
    return "\n".join([*header, *rows, summary])


def _hit_line(hit: models.RecallHit) -> str:
    scores = hit.scores
    lexical = "-" if scores.lexical is None else f"{scores.lexical:.4f}"
    return (
        f"{scores.fused:>7.4f}  {scores.dense:>7.4f}  {lexical:>7}  "
        f"{hit.memory_id}  {hit.content or ''}"
    )
