"""A conversation through the whole platform with the typed client: its messages become
memories (MiniLM, every service running), recall finds them, and deleting the conversation
withdraws exactly them through a prune job that reaches `verified_empty`."""

from __future__ import annotations

from engram_client import EngramClient
from tests.support.platform import Platform


def test_a_conversation_is_remembered_recalled_and_deleted(platform: Platform) -> None:
    with EngramClient(platform.url, platform.key) as engram:
        agent = engram.create_agent(name="concierge").agent_id
        kept = engram.write_memory(agent, "The user's passport expires in March.", user_id="u1")
        messages = [
            {"role": "system", "content": "You are a concierge."},
            {"role": "user", "content": "Book me a table for two at an Italian place on Friday."},
            {"role": "assistant", "content": "Booked Trattoria Nonna for Friday at 8 pm."},
            {"role": "tool", "content": '{"booking": "TN-4471"}', "name": "bookings"},
        ]
        accepted = engram.converse(agent, messages, user_id="u1", session_id="s1")
        done = engram.wait_for_conversation(agent, accepted.conversation_id, timeout=120)
        assert done.status == "processed" and done.memories == {"active": 2}
        assert [m.outcome for m in done.messages] == ["kept", "memory", "memory", "kept"]
        hits = engram.recall(agent, "which restaurant did I book on Friday", top_k=3).results
        said = {m.memory_id for m in done.messages if m.memory_id}
        assert {hit.memory_id for hit in hits[:2]} == said

        deleting = engram.delete_conversation(agent, accepted.conversation_id)
        job = engram.wait_for_prune_job(deleting.prune_job_id, timeout=120)
        assert job.kind == "conversation" and job.verified_empty is True
        assert job.counts["memories"] == 2
        gone = engram.get_conversation(agent, accepted.conversation_id)
        assert gone.status == "deleted" and gone.memories == {"withdrawn": 2}
        assert engram.wait_for_memory(agent, kept.memory_id).status == "active"
