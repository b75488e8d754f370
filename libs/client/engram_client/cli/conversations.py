"""`engram memory converse`: a conversation file turned into memories."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import UsageError, add_wait_timeout, client_from, json_object
from engram_client.cli.output import emit


def add_converse(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    metadata = json_object(args.metadata, "--metadata") or body.get("metadata")
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
