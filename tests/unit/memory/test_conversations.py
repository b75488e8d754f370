"""Conversations: which messages become memories, how the model's answers are read, and the
handler's saved progress (a retry never asks the model again for what it answered)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from engram_events import Envelope, new_event
from engram_events.catalog import CONVERSATION_SUBMITTED
from engram_events.content import ContentLimits
from engram_events.payloads.conversations import ConversationSubmitted
from engram_memory.api.views import conversation_view
from engram_memory.domain.conversation_records import (
    ConversationRecord,
    Extraction,
    FactEntry,
)
from engram_memory.domain.conversations import (
    ModelOptions,
    decision_request,
    message_entries,
    read_decision,
    read_facts,
)
from engram_memory.handlers import ConversationHandlers
from engram_memory.service.conversations import ConversationIntake
from engram_platform.chat import ModelFailed, ModelUnavailable, Reply
from engram_platform.retry import PermanentError
from tests.support.chat_fakes import FakeModel
from tests.unit.memory.fakes import refused_write

pytestmark = pytest.mark.unit

T = "ten_a"
OPTIONS = ModelOptions(model="configured", candidates=3)


def submitted(*messages: dict[str, Any], conversation_id: str = "conv_1") -> Envelope[Any]:
    payload = ConversationSubmitted(
        conversation_id=conversation_id,
        agent_id="agt_1",
        messages=list(messages),
        user_id="u1",
        session_id="s1",
        metadata={"channel": "web"},
    )
    return new_event(CONVERSATION_SUBMITTED, payload, tenant_id=T)


CHAT = (
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "I live in Riga."},
    {"role": "assistant", "content": "Noted."},
    {"role": "assistant", "content": "   "},
    {"role": "tool", "content": "{}", "name": "lookup"},
    {"role": "user", "content": None},
)


class FakeConversations:
    """ConversationStore in a dict of records."""

    def __init__(self) -> None:
        self.records: dict[str, ConversationRecord] = {}

    async def get(self, tenant_id: str, conversation_id: str) -> ConversationRecord | None:
        return self.records.get(f"{tenant_id}:{conversation_id}")

    async def owners(self, tenant_id: str, conversation_ids: Sequence[str]) -> dict[str, str]:
        found = [self.records.get(f"{tenant_id}:{c}") for c in conversation_ids]
        return {r.conversation_id: r.agent_id for r in found if r is not None}

    async def open(self, record: ConversationRecord) -> ConversationRecord:
        key = f"{record.tenant_id}:{record.conversation_id}"
        stored = self.records.get(key)
        if stored is not None and stored.dead_lettered_at is not None and stored.status == "failed":
            del self.records[key]
        return self.records.setdefault(key, record)

    async def mark_failed(self, record: ConversationRecord, reason: str) -> ConversationRecord:
        key = f"{record.tenant_id}:{record.conversation_id}"
        stored = self.records.get(key)
        if stored is None:
            self.records[key] = replace(record, status="failed", error=reason)
        elif stored.status not in ("failed", "deleted"):
            self.records[key] = replace(stored, status="failed", error=reason)
        return self.records[key]

    def _set(self, tenant_id: str, conversation_id: str, **fields: Any) -> None:
        key = f"{tenant_id}:{conversation_id}"
        if self.records[key].status != "deleted":
            self.records[key] = replace(self.records[key], **fields)

    async def save_facts(
        self,
        tenant_id: str,
        conversation_id: str,
        facts: Sequence[FactEntry],
        model_calls: int,
        *,
        extraction: Extraction | None = None,
    ) -> None:
        more = {} if extraction is None else {"extraction": extraction}
        self._set(tenant_id, conversation_id, facts=tuple(facts), model_calls=model_calls, **more)

    async def settle(
        self, tenant_id: str, conversation_id: str, status: str, error: str | None = None
    ) -> None:
        self._set(tenant_id, conversation_id, status=status, error=error)

    async def count_attempt(self, tenant_id: str, conversation_id: str) -> int:
        key = f"{tenant_id}:{conversation_id}"
        self.records[key] = replace(self.records[key], attempts=self.records[key].attempts + 1)
        return self.records[key].attempts

    async def mark_deleted(
        self,
        tenant_id: str,
        agent_id: str,
        conversation_id: str,
        kept: ConversationRecord | None,
    ) -> None:
        left = kept or ConversationRecord(tenant_id, conversation_id, agent_id, "deleted")
        self.records[f"{tenant_id}:{conversation_id}"] = replace(left, status="deleted")


class FakeRecall:
    """The agent's memories most like a query: the same canned hits for every query."""

    def __init__(self, *hits: dict[str, Any]) -> None:
        self.hits = list(hits)
        self.queries: list[tuple[str, Any]] = []

    async def recall(self, tenant_id: str, agent_id: str, query: str, top_k: int, **kw: Any) -> Any:
        self.queries.append((query, kw["filter"]))

        class Found:
            results = self.hits[:top_k]

        return Found()


def handlers(
    model: FakeModel | None = None, recall: FakeRecall | None = None, attempts: int = 3
) -> ConversationHandlers:
    return ConversationHandlers(
        ConversationIntake(
            FakeConversations(),
            None,  # type: ignore[arg-type]
            ContentLimits(1, 200),
            recall=recall,  # type: ignore[arg-type]
            model=model,
            options=OPTIONS if model else None,
            max_attempts=attempts,
        )
    )


def stored(h: ConversationHandlers) -> list[ConversationRecord]:
    """The records the fake store holds."""
    store = h.intake.store
    assert isinstance(store, FakeConversations)
    return list(store.records.values())


def reply(data: Any, model: str = "served-model") -> Reply:
    return Reply(json.dumps(data), model)


def test_user_and_assistant_messages_with_content_name_a_memory() -> None:
    entries = message_entries(T, submitted(*CHAT).payload)
    assert [bool(e.memory_id) for e in entries] == [False, True, True, False, False, False]
    again = message_entries(T, submitted(*CHAT).payload)
    assert [e.memory_id for e in entries] == [e.memory_id for e in again], "deterministic"
    other = message_entries(T, submitted(*CHAT, conversation_id="conv_2").payload)
    assert entries[1].memory_id != other[1].memory_id
    assert entries[5].content_sha256 is None and entries[5].chars == 0


async def test_without_a_model_each_remembered_message_is_one_write_replayed_the_same() -> None:
    h = handlers()
    event = submitted(*CHAT)
    writes = await h.on_submitted(event)
    assert [w.payload.content for w in writes] == ["I live in Riga.", "Noted."]
    first = writes[0].payload
    assert first.type == "conversation" and first.derived_from == ["conv_1"]
    assert (first.user_id, first.session_id) == ("u1", "s1")
    assert first.metadata == {
        "channel": "web",
        "role": "user",
        "message_index": 1,
        "conversation_id": "conv_1",
    }
    replayed = await h.on_submitted(submitted(*CHAT))
    assert [w.event_id for w in replayed] == [w.event_id for w in writes], (
        "a repeat stages the same"
    )


async def test_facts_are_added_superseding_or_skipped_and_each_decision_kept() -> None:
    hits = [{"memory_id": "mem_old", "content": "lives in Oslo"}, {"memory_id": "mem_k"}]
    model = FakeModel(
        reply({"facts": [{"content": "lives in Riga"}, {"content": "likes tea"}]}),
        reply({"decision": "supersede", "memory_id": "mem_old"}),
        reply({"decision": "skip", "memory_id": "mem_old"}),
    )
    recall = FakeRecall(*hits)
    h = handlers(model, recall)
    writes = await h.on_submitted(submitted(*CHAT))
    [moved] = [w.payload for w in writes]
    assert moved.supersedes == "mem_old" and moved.type == "fact"
    assert moved.extracted_by is not None and moved.extracted_by.model == "served-model"
    [record] = stored(h)
    assert record.status == "processed" and record.model_calls == 3
    supersede, skip = [f.decision for f in record.facts or ()]
    assert supersede is not None and supersede.candidates == ("mem_old",), (
        "a hit without content is not shown"
    )
    assert skip is not None and skip.action == "skip" and skip.known_as == "mem_old"
    assert [q for q, _ in recall.queries] == ["lives in Riga", "likes tea"]
    assert recall.queries[0][1].user_id == "u1"
    decide = model.bodies[1]
    assert decide["response_format"]["type"] == "json_schema"
    assert json.loads(decide["messages"][1]["content"])["new_fact"] == "lives in Riga"


async def test_a_fact_like_nothing_held_is_added_without_asking() -> None:
    model = FakeModel(reply({"facts": [{"content": "likes tea"}]}))
    writes = await handlers(model, FakeRecall()).on_submitted(submitted(*CHAT))
    assert [w.payload.extracted_by.decision for w in writes] == ["add"]
    assert len(model.bodies) == 1


async def test_a_retry_asks_only_what_was_not_answered() -> None:
    model = FakeModel(
        reply({"facts": [{"content": "a"}, {"content": "b"}]}),
        reply({"decision": "add", "memory_id": None}),
        ModelUnavailable("the model endpoint answered HTTP 500"),
        reply({"decision": "add", "memory_id": None}),
    )
    h = handlers(model, FakeRecall({"memory_id": "mem_x", "content": "x"}))
    event = submitted(*CHAT)
    with pytest.raises(ModelUnavailable):
        await h.on_submitted(event)
    writes = await h.on_submitted(event)
    assert len(writes) == 2 and len(model.bodies) == 4, "extraction and the first decision kept"


async def test_output_that_is_not_json_fails_the_conversation_with_its_reason() -> None:
    h = handlers(FakeModel(Reply("{nope", "m")), FakeRecall())
    assert await h.on_submitted(submitted(*CHAT)) == []
    [record] = stored(h)
    assert record.status == "failed"
    assert record.error == "the model's output is not valid JSON (line 1 column 2)"
    assert await h.on_submitted(submitted(*CHAT)) == [], "a failed conversation stays failed"


async def test_an_endpoint_down_on_every_attempt_is_recorded_then_dead_lettered() -> None:
    h = handlers(FakeModel(ModelUnavailable("down")), FakeRecall(), attempts=2)
    with pytest.raises(ModelUnavailable):
        await h.on_submitted(submitted(*CHAT))
    with pytest.raises(PermanentError):
        await h.on_submitted(submitted(*CHAT))
    [record] = stored(h)
    assert record.error == "processing failed after 2 attempts (ModelUnavailable)"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"records": []}, "no `facts` array"),
        ({"facts": [{"content": ""}]}, "fact 0 has no `content` text"),
        ({"facts": ["text"]}, "fact 0 has no `content` text"),
        ({"facts": [{"content": "x" * 11}]}, "fact 0 is longer than 10 characters"),
    ],
)
def test_facts_the_output_does_not_hold_fail(data: Any, reason: str) -> None:
    with pytest.raises(ModelFailed, match=reason):
        read_facts(reply(data), 10)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"decision": "merge"}, "no `decision` of add, supersede or skip"),
        ({"decision": "skip", "memory_id": "mem_other"}, "`skip` names no memory it was shown"),
        ({"decision": "supersede"}, "`supersede` names no memory it was shown"),
    ],
)
def test_decisions_naming_what_was_not_shown_fail(data: Any, reason: str) -> None:
    with pytest.raises(ModelFailed, match=reason):
        read_decision(reply(data), {"mem_a"})


def test_read_facts_drops_repeats_and_decisions_read_back() -> None:
    assert read_facts(reply({"facts": [{"content": " a "}, {"content": "a"}]}), 10) == ["a"]
    assert read_decision(reply({"decision": "add", "memory_id": "x"}), set()).action == "add"
    shown = decision_request("fact", [{"memory_id": "m", "content": "c"}], OPTIONS)
    assert shown["model"] == "configured" and shown["temperature"] == 0.0


async def test_a_dead_lettered_submission_settles_failed_without_its_texts_and_replays() -> None:
    h = handlers()
    event = submitted(*CHAT)
    assert await h.on_submitted_dead_lettered(event, refused_write(event)) == []
    record = await h.intake.store.get(T, "conv_1")
    assert record is not None
    view = conversation_view(record, {})
    assert (view["status"], view["settled"]) == ("failed", True)
    assert view["error"] == "dead_lettered: BulkWriteError: write error codes 2"
    assert view["messages"] == [] and view["metadata"] == {}
    writes = await h.on_submitted(event)
    assert [w.payload.content for w in writes] == ["I live in Riga.", "Noted."], "replayed"
