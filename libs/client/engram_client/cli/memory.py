"""`engram memory store | get | recall`: an agent's memories."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, add_wait_timeout, client_from
from engram_client.cli.output import emit


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `memory` commands."""
    memory = commands.add_parser("memory", help="store and recall an agent's memories")
    actions = memory.add_subparsers(dest="action", required=True, metavar="ACTION")

    store = actions.add_parser(
        "store",
        help="store a memory",
        description="Store TEXT (or stdin when TEXT is -) as a memory of AGENT; prints the "
        "memory id. --wait waits until it is no longer pending and exits 1 if it was rejected.",
    )
    store.add_argument("agent_id", metavar="AGENT")
    store.add_argument("text", metavar="TEXT", help="the memory's content, or - for stdin")
    store.add_argument("--type", default="conversation", help="memory type (default conversation)")
    store.add_argument("--metadata", help="a JSON object of metadata")
    store.add_argument(
        "--derived-from", action="append", default=[], metavar="ID", help="repeatable"
    )
    store.add_argument("--supersedes", metavar="MEMORY_ID")
    store.add_argument("--idempotency-key", help="reuse to make a re-run a no-op")
    store.add_argument("--wait", action="store_true", help="wait until stored")
    add_wait_timeout(store, 60)
    store.set_defaults(handler=store_memory)

    get = actions.add_parser("get", help="show one memory")
    get.add_argument("agent_id", metavar="AGENT")
    get.add_argument("memory_id", metavar="MEMORY_ID")
    get.set_defaults(handler=get_memory)

    recall = actions.add_parser(
        "recall",
        help="recall memories similar to a query",
        description="Prints `SCORE  MEMORY_ID  CONTENT` per hit and how many fell below the floor.",
    )
    recall.add_argument("agent_id", metavar="AGENT")
    recall.add_argument("query", metavar="QUERY")
    recall.add_argument("--top-k", type=int, default=5, help="at most this many hits (default 5)")
    recall.add_argument("--min-score", type=float, help="drop hits scoring below this")
    recall.add_argument("--type", dest="types", action="append", help="only this type (repeat)")
    recall.set_defaults(handler=recall_memories)


def _metadata(raw: str | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--metadata is not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise UsageError("--metadata must be a JSON object")
    return value


def store_memory(args: argparse.Namespace) -> int:
    """Write the memory; optionally wait for its final status."""
    text = sys.stdin.read() if args.text == "-" else args.text
    metadata = _metadata(args.metadata)
    with client_from(args) as client:
        accepted = client.write_memory(
            args.agent_id,
            text,
            type=args.type,
            metadata=metadata,
            derived_from=args.derived_from,
            supersedes=args.supersedes,
            idempotency_key=args.idempotency_key,
        )
        if not args.wait:
            emit(accepted, args.json, lambda a: a.memory_id)
            return exit_codes.OK
        memory = client.wait_for_memory(args.agent_id, accepted.memory_id, args.timeout)
    emit(memory, args.json, lambda m: f"{m.memory_id}  {m.status}")
    return exit_codes.API_ERROR if memory.status == "rejected" else exit_codes.OK


def get_memory(args: argparse.Namespace) -> int:
    """Print one memory."""
    with client_from(args) as client:
        memory = client.get_memory(args.agent_id, args.memory_id)
    emit(memory, True)
    return exit_codes.OK


def recall_memories(args: argparse.Namespace) -> int:
    """Print the hits at or above the floor."""
    with client_from(args) as client:
        result = client.recall(
            args.agent_id,
            args.query,
            top_k=args.top_k,
            min_score=args.min_score,
            types=args.types,
        )
    emit(result, args.json, _recall_text)
    return exit_codes.OK


def _recall_text(result: models.Recall) -> str:
    lines = [f"{h.score:.3f}  {h.memory_id}  {h.content or ''}" for h in result.results]
    lines.append(f"({len(result.results)} hit(s); {result.dropped_below_floor} below the floor)")
    return "\n".join(lines)
