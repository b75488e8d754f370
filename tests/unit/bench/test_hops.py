"""A write's wait split by hop: each mark to the next, only for writes seen at every mark."""

from __future__ import annotations

import pytest

from bench._hops import HOPS, hop_times

pytestmark = pytest.mark.unit


def test_each_hop_is_the_time_from_one_mark_to_the_next() -> None:
    sent = {"mem_1": 10.0, "mem_2": 20.0}
    arrivals = {(kind, "mem_1"): 10.0 + 0.01 * (n + 1) for n, kind in enumerate(HOPS)}
    arrivals[(HOPS[0], "mem_2")] = 20.5
    seen = {"mem_1": 10.1, "mem_2": 21.0}
    times = hop_times(sent, seen, arrivals)
    assert list(times) == ["gateway", "memory_write", "embedding", "memory_store"]
    assert [round(t[0], 3) for t in times.values()] == [0.01, 0.01, 0.01, 0.07]
    assert all(len(t) == 1 for t in times.values()), "mem_2 lacks marks, so it is left out"
