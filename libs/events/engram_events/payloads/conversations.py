"""Conversations: chat transcripts an agent hands over, turned into memories by the memory
service (one per message, or the facts a configured model extracts and reconciles)."""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from engram_events.ids import Id
from engram_events.payloads._base import Payload
from engram_events.values import Metadata, Text

Role = Literal["user", "assistant", "system", "tool"]
SpeakerName = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[\w.-]+$")]
MAX_MESSAGES = 1000
"""The event's own bound; the configured limit (checked at the door) is lower."""


class ConversationMessage(Payload):
    """One message as the app sent it; `content` may be absent (a tool call, say)."""

    role: Role
    content: Text | None = Field(default=None, max_length=64_000)
    name: SpeakerName | None = None
    at: datetime | None = None


class ConversationSubmitted(Payload):
    """An agent's conversation to remember; the memory service stores and processes it."""

    conversation_id: Id
    agent_id: Id
    messages: list[ConversationMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    user_id: Id | None = None
    session_id: Id | None = None
    metadata: Metadata = Field(default_factory=dict)
    idempotency_key: Id | None = None


class ConversationDeleted(Payload):
    """A conversation and every memory derived from it must go (a prune job follows it)."""

    conversation_id: Id
    agent_id: Id
    prune_job_id: Id | None = None
