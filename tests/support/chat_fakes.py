"""A hand-written fake of the chat-model port (`engram_platform.chat.ChatModel`)."""

from __future__ import annotations

from typing import Any

from engram_platform.chat import Reply


class FakeModel:
    """The chat-completions port: canned replies (or exceptions) in order, calls recorded; the
    last one answers every call after it."""

    def __init__(self, *replies: Reply | Exception) -> None:
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []

    async def complete(self, body: dict[str, Any]) -> Reply:
        self.bodies.append(body)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply
