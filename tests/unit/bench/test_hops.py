"""A write's wait split by hop: each mark to the next, only for writes seen at every mark, and a
write stored in memory's one pass (no embedding marks) as the gateway and that pass."""

from __future__ import annotations

import pytest

from bench._hops import HOPS, hop_times

pytestmark = pytest.mark.unit


def test_each_hop_is_the_time_from_one_mark_to_the_next() -> None:
    sent = {"mem_1": 10.0, "mem_2": 20.0, "mem_3": 30.0, "mem_4": 40.0}
    arrivals = {(kind, "mem_1"): 10.0 + 0.01 * (n + 1) for n, kind in enumerate(HOPS)}
    arrivals[(HOPS[0], "mem_2")] = 20.5
    arrivals[(HOPS[0], "mem_3")] = 30.5
    arrivals[(HOPS[0], "mem_4")] = 40.5
    arrivals[(HOPS[1], "mem_4")] = 40.6
    seen = {"mem_1": 10.1, "mem_2": 21.0, "mem_4": 41.0}
    times = hop_times(sent, seen, arrivals)
    assert list(times) == [
        "gateway",
        "memory_write",
        "embedding",
        "memory_store",
        "memory_one_pass",
    ]
    assert [round(t, 3) for t in times["gateway"]] == [0.01, 0.5]
    assert [round(t[0], 3) for t in list(times.values())[1:]] == [0.01, 0.01, 0.07, 0.5]
    assert len(times["memory_one_pass"]) == 1, "mem_3 was never seen, mem_4 lacks a mark"
