"""A service's consumer in parts: message types, routing, attempts (retry and dead-letter),
spans, delivery strategies, and overlapped fetches for pipelined delivery."""

from engram_platform.consuming.consumer import BULK_POLL_MS, Consumer
from engram_platform.consuming.delivery import OUTBOXED, Delivery, Direct, Outboxed, Pipelined
from engram_platform.consuming.messages import BatchResult, Outcome, PreparedBatch, Published

__all__ = [
    "BULK_POLL_MS",
    "OUTBOXED",
    "BatchResult",
    "Consumer",
    "Delivery",
    "Direct",
    "Outboxed",
    "Outcome",
    "Pipelined",
    "PreparedBatch",
    "Published",
]
