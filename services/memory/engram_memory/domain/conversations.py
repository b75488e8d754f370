"""Conversations, the pure part: which messages become memories, what the model is asked, and
how its answers are read.

Without a model every user and assistant message with content is a memory of type
`conversation`; system and tool messages stay in the conversation's record. With a model, the
model proposes facts from the whole transcript, and for each fact that resembles memories the
agent already holds it chooses `add`, `supersede <memory_id>` or `skip` (already known as
`<memory_id>`). Memory ids and event ids derive from the tenant, the agent, the conversation
and the message or fact index, so a replay writes the same memories once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram_events.content import content_sha256
from engram_events.payloads.conversations import ConversationSubmitted
from engram_memory.domain.conversation_records import Action, FactEntry, MessageEntry
from engram_platform.chat import ModelFailed, Reply, json_output, json_schema_format

MESSAGE_TYPE = "conversation"
FACT_TYPE = "fact"
REMEMBERED_ROLES = ("user", "assistant")
EXTRACT_INSTRUCTIONS = (
    "You read a conversation between a user and an assistant and list the facts worth "
    "remembering about the user, their world and their preferences: each fact one short, "
    "self-contained sentence in the third person. Leave out greetings, questions, small talk "
    "and anything only the assistant assumed. Answer with JSON matching the response schema "
    "and nothing else; an empty list when nothing is worth keeping."
)
DECIDE_INSTRUCTIONS = (
    "You keep an agent's long-term memory. You are given a new fact and the most similar "
    "memories already stored. Choose `add` when the fact is new, `supersede` with the "
    "`memory_id` of the one memory the fact updates or contradicts (it replaces that memory), "
    "or `skip` with the `memory_id` of the memory that already says it. Answer with JSON "
    "matching the response schema and nothing else."
)
FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts"],
    "properties": {
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["content"],
                "properties": {"content": {"type": "string", "minLength": 1}},
            },
        }
    },
}
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["decision", "memory_id"],
    "properties": {
        "decision": {"type": "string", "enum": ["add", "supersede", "skip"]},
        "memory_id": {"type": ["string", "null"]},
    },
}


@dataclass(frozen=True)
class ModelOptions:
    """The configured model and how many similar memories each decision is shown."""

    model: str
    temperature: float | None = 0.0
    candidates: int = 5


@dataclass(frozen=True)
class Decision:
    """What the model chose for one fact; `memory_id` names the memory superseded or known."""

    action: Action
    memory_id: str | None = None


def derived_id(prefix: str, tenant_id: str, agent_id: str, conversation_id: str, what: str) -> str:
    """A deterministic id for something a conversation produces (a message's or a fact's
    memory): the same conversation replayed names the same memories."""
    seed = "\x1f".join([tenant_id, agent_id, conversation_id, what]).encode()
    return f"{prefix}_{hashlib.sha256(seed).hexdigest()[:32]}"


def message_entries(tenant_id: str, conversation: ConversationSubmitted) -> list[MessageEntry]:
    """The conversation's messages as its record keeps them; a user or assistant message with
    content names the memory it becomes (whether the model or the messages themselves are
    remembered, the record keeps every message)."""
    entries = []
    for index, message in enumerate(conversation.messages):
        content = message.content or ""
        remembered = message.role in REMEMBERED_ROLES and bool(content.strip())
        memory_id = derived_id(
            "mem",
            tenant_id,
            conversation.agent_id,
            conversation.conversation_id,
            f"message:{index}",
        )
        entries.append(
            MessageEntry(
                index=index,
                role=message.role,
                chars=len(content),
                content_sha256=content_sha256(content) if message.content is not None else None,
                content=message.content,
                name=message.name,
                at=message.at,
                memory_id=memory_id if remembered else None,
            )
        )
    return entries


def fact_entries(
    tenant_id: str, agent_id: str, conversation_id: str, facts: list[str]
) -> list[FactEntry]:
    """The facts a model proposed, as the record keeps them until each is decided."""
    return [
        FactEntry(
            index=index,
            content_sha256=content_sha256(fact),
            memory_id=derived_id("mem", tenant_id, agent_id, conversation_id, f"fact:{index}"),
            content=fact,
        )
        for index, fact in enumerate(facts)
    ]


def transcript(messages: Sequence[MessageEntry]) -> str:
    """The conversation as the model reads it: one `role (name): content` block per message."""
    lines = []
    for message in messages:
        if message.content is None:
            continue
        who = message.role + (f" ({message.name})" if message.name else "")
        lines.append(f"{who}: {message.content}")
    return "\n\n".join(lines)


def _body(options: ModelOptions, instructions: str, text: str, schema: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": options.model,
        "messages": [
            {"role": "system", "content": instructions},
            {"role": "user", "content": text},
        ],
        "response_format": schema,
    }
    if options.temperature is not None:
        body["temperature"] = options.temperature
    return body


def extraction_request(messages: Sequence[MessageEntry], options: ModelOptions) -> dict[str, Any]:
    """The request for the facts a conversation states."""
    form = json_schema_format("engram_conversation_facts", FACTS_SCHEMA)
    return _body(options, EXTRACT_INSTRUCTIONS, transcript(messages), form)


def decision_request(
    fact: str, candidates: list[dict[str, Any]], options: ModelOptions
) -> dict[str, Any]:
    """The request for one fact's decision against the memories most like it."""
    shown = {
        "new_fact": fact,
        "memories": [{"memory_id": c["memory_id"], "content": c["content"]} for c in candidates],
    }
    form = json_schema_format("engram_memory_decision", DECISION_SCHEMA)
    return _body(options, DECIDE_INSTRUCTIONS, json.dumps(shown, ensure_ascii=False), form)


def read_facts(reply: Reply, max_chars: int) -> list[str]:
    """The proposed facts, or a permanent, content-free reason the output holds none."""
    data = json_output(reply)
    items = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ModelFailed("the model's output has no `facts` array")
    facts = []
    for n, item in enumerate(items):
        content = item.get("content") if isinstance(item, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise ModelFailed(f"the model's fact {n} has no `content` text")
        if len(content) > max_chars:
            raise ModelFailed(f"the model's fact {n} is longer than {max_chars} characters")
        facts.append(content.strip())
    return list(dict.fromkeys(facts))


def read_decision(reply: Reply, offered: set[str]) -> Decision:
    """The model's choice for one fact; a memory it names must be one it was shown."""
    data = json_output(reply)
    action = data.get("decision") if isinstance(data, dict) else None
    if action not in ("add", "supersede", "skip"):
        raise ModelFailed("the model's output has no `decision` of add, supersede or skip")
    if action == "add":
        return Decision("add")
    named = data.get("memory_id")
    if not isinstance(named, str) or named not in offered:
        raise ModelFailed(f"the model's `{action}` names no memory it was shown")
    return Decision(action, named)
