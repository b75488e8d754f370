"""Which events share a topic: a consumer reads every event of the topics it subscribes to."""

from engram_events.catalog import MEMORY_WRITE_REQUESTED
from engram_events.registry import EVENT_TYPES
from engram_events.topics import Topics


def test_memory_outcomes_have_a_topic_no_platform_service_reads() -> None:
    """Memory's answers on its own inputs' topic sat in front of other tenants' single writes,
    so the outcomes topic carries the three outcomes and nothing any service consumes."""
    on_outcomes = {t.name for t in EVENT_TYPES.values() if t.topic == Topics.MEMORY_OUTCOMES}
    assert on_outcomes == {"memory.stored", "memory.rejected", "memory.withdrawn"}
    assert MEMORY_WRITE_REQUESTED.topic != Topics.MEMORY_OUTCOMES
