"""`engram memory store | get | recall | list | count | clear | converse`: an agent's memories."""

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
    memory = commands.add_parser(
        "memory",
        help="store, recall, list, count and clear an agent's memories; turn conversations "
        "into memories",
    )
    actions = memory.add_subparsers(dest="action", required=True, metavar="ACTION")
    _add_store(actions)
    _add_get(actions)
    _add_recall(actions)
    _add_list(actions)
    _add_count(actions)
    _add_clear(actions)
    _add_converse(actions)


def _add_converse(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    converse = actions.add_parser(
        "converse",
        help="turn a conversation (a JSON file of chat messages) into memories",
        description="Send FILE (or stdin when FILE is -) as a conversation of AGENT; prints the "
        'conversation id. FILE holds a list of messages ({"role": "user"|"assistant"|"system"|'
        '"tool", "content", "name"?, "at"?}), or an object with "messages" and optionally '
        '"user_id", "session_id", "metadata" and "idempotency_key" (flags win). Without a model '
        "each user and assistant message becomes a memory; with one configured in the memory "
        "service, the facts it extracts are added, supersede older memories or are skipped. "
        "--wait waits until it is settled, prints one line per message and fact, and exits 1 "
        "if it failed.",
    )
    converse.add_argument("agent_id", metavar="AGENT")
    converse.add_argument("file", metavar="FILE", help="a JSON file of messages, or - for stdin")
    converse.add_argument("--user", metavar="USER_ID", help="the end user it is with")
    converse.add_argument("--session", metavar="SESSION_ID", help="the session it took place in")
    converse.add_argument("--metadata", help="a JSON object copied onto every memory")
    converse.add_argument("--idempotency-key", help="reuse to make a re-run a no-op")
    converse.add_argument("--wait", action="store_true", help="wait until settled")
    add_wait_timeout(converse, 120)
    converse.set_defaults(handler=converse_file)


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
        choices=("pending", "active", "superseded", "withdrawn", "rejected"),
        help="only memories in this status",
    )
    _add_scope_filter(parser)


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


def listing_text(page: models.MemoryPage, *, across_agents: bool) -> str:
    """One line per memory, led by its agent when the listing spans agents."""
    return "\n".join(_memory_line(m, across_agents) for m in page.memories)


def _memory_line(memory: models.Memory, across_agents: bool) -> str:
    line = f"{memory.memory_id}  {memory.status}  {memory.type or '-'}  {one_line(memory.content)}"
    return f"{memory.agent_id or '-'}  {line}" if across_agents else line


def count_memories(args: argparse.Namespace) -> int:
    """Print the total, then per status and per type."""
    with client_from(args) as client:
        counted = client.count_memories(args.agent_id, **_selection(args))
    emit(counted, args.json, count_text)
    return exit_codes.OK


def count_text(counted: models.MemoryCount) -> str:
    """The total alone on the first line (easy to read in a script), then the breakdowns."""
    return "\n".join(
        [
            str(counted.count),
            f"by status: {_tally(counted.by_status)}",
            f"by type: {_tally(counted.by_type)}",
        ]
    )


def _tally(counts: dict[str, int]) -> str:
    return " ".join(f"{name}={n}" for name, n in sorted(counts.items())) or "-"


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


def one_line(text: str | None) -> str:
    """Content on a single line, so each memory or hit stays one line of output."""
    return " ".join((text or "").split())


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
        f"{hit.memory_id}  {one_line(hit.content)}"
    )


def _conversation_file(raw: str) -> dict[str, Any]:
    """The file's conversation as a request body; a usage error when it is not one."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"FILE is not JSON: {exc.msg}") from None
    if isinstance(value, list):
        value = {"messages": value}
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        raise UsageError('FILE must hold a list of messages or an object with "messages"')
    return value


def converse_file(args: argparse.Namespace) -> int:
    """Send the conversation; optionally wait until it is settled."""
    if args.file == "-":
        raw = sys.stdin.read()
    else:
        try:
            with open(args.file, encoding="utf-8") as handle:
                raw = handle.read()
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror}") from None
    body = _conversation_file(raw)
    metadata = _json_object(args.metadata, "--metadata") or body.get("metadata")
    with client_from(args) as client:
        accepted = client.converse(
            args.agent_id,
            body["messages"],
            user_id=args.user or body.get("user_id"),
            session_id=args.session or body.get("session_id"),
            metadata=metadata,
            idempotency_key=args.idempotency_key or body.get("idempotency_key"),
        )
        if not args.wait:
            emit(accepted, args.json, lambda a: a.conversation_id)
            return exit_codes.OK
        done = client.wait_for_conversation(args.agent_id, accepted.conversation_id, args.timeout)
    emit(done, args.json, conversation_text)
    return exit_codes.API_ERROR if done.status == "failed" else exit_codes.OK


def conversation_text(conversation: models.Conversation) -> str:
    """The conversation's status, then one line per message and per fact with its outcome."""
    head = "  ".join(
        filter(None, (conversation.conversation_id, conversation.status, conversation.error))
    )
    lines = [head]
    for m in conversation.messages:
        what = m.outcome or ""
        if m.memory_id:
            what = f"{m.memory_id}  {m.memory_status}"
            what += f"  duplicate of {m.duplicate_of}" if m.duplicate_of else ""
        lines.append(f"message {m.index}  {m.role}  {what}")
    for f in conversation.facts or []:
        target = f.supersedes or f.known_as or ""
        written = f"{f.memory_id}  {f.memory_status}" if f.memory_id else ""
        lines.append("  ".join(filter(None, (f"fact {f.index}", f.decision, target, written))))
    return "\n".join(lines)
