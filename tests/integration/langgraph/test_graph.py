"""A LangGraph graph whose nodes store and recall through `EngramStore` on a running gateway."""

from __future__ import annotations

import uuid
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from engram_client import EngramClient
from engram_langgraph import EngramStore


class Chat(TypedDict, total=False):
    """The graph's state: who speaks, what they said, what they ask, what was recalled."""

    agent: str
    user: str
    said: str
    asked: str
    recalled: list[str]


def remember(state: Chat, *, store: BaseStore) -> Chat:
    """Keep what the user said as a memory of theirs."""
    store.put((state["agent"], state["user"]), uuid.uuid4().hex, {"text": state["said"]})
    return {}


def recall(state: Chat, *, store: BaseStore) -> Chat:
    """Find what the user said that bears on the question."""
    hits = store.search((state["agent"], state["user"]), query=state["asked"], limit=1)
    return {"recalled": [hit.value["text"] for hit in hits]}


def test_a_graph_stores_and_recalls_through_engram(client: EngramClient, agent: str) -> None:
    store = EngramStore(client, index_fields=["text"])
    store.put((agent, "u_ada"), "old", {"text": "Ada's bicycle is a blue Peugeot"})
    builder = StateGraph(Chat)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)

    out = graph.invoke(
        {
            "agent": agent,
            "user": "u_ada",
            "said": "Ada drinks green tea with jasmine every morning",
            "asked": "what tea does Ada drink in the morning",
        }
    )

    assert out["recalled"] == ["Ada drinks green tea with jasmine every morning"]
    memories = client.list_memories(agent, user_id="u_ada", status="active").memories
    assert len(memories) == 2 and all(m.type == "langgraph" for m in memories)
