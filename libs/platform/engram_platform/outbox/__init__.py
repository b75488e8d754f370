"""Transactional outbox without transactions: stage events durably, a relay publishes them.

A consumer stages the events its handler returned before it marks the input applied and
commits the offset, so a crash replays the handler and stages the same (deterministic) ids
again. `staging` packs entries into parcels, `embedded` carries a request's events inside the
document it writes (with crash recovery), and `relay` sends parcels over the one send path
(`engram_platform.sending`).
"""

from engram_platform.outbox.embedded import MARKERS, PENDING_FIELD, Outbox
from engram_platform.outbox.entries import next_order, outbox_entry, trace_headers
from engram_platform.outbox.relay import LEASES, OutboxRelay
from engram_platform.outbox.staging import INDEXES, OUTBOX, parcel_entries

__all__ = [
    "INDEXES",
    "LEASES",
    "MARKERS",
    "OUTBOX",
    "PENDING_FIELD",
    "Outbox",
    "OutboxRelay",
    "next_order",
    "outbox_entry",
    "parcel_entries",
    "trace_headers",
]
