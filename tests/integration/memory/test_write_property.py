"""A property of the write path, over random payloads: every write is answered 202 (or 200 for
a duplicate) or 422, never a 5xx, and every 202 reaches a terminal status — nothing stays
`pending` — with its metadata read back exactly as written.

ENGRAM_FUZZ_EXAMPLES bounds the examples (small for `make test`, large for `make fuzz`).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.integration.memory.conftest import MemoryStack, new_agent
from tests.support.polling import until

EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "40"))
TERMINAL = {"active", "rejected", "failed", "withdrawn", "superseded"}
GOOD_KEY = "abcXYZ019_-"

good_keys = st.text(alphabet=GOOD_KEY, min_size=1, max_size=64)
good_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
bad_keys = st.one_of(
    st.tuples(
        st.text(alphabet=GOOD_KEY, max_size=8),
        st.sampled_from([".", "$", " ", "é", "\x00", "/"]),
        st.text(alphabet=GOOD_KEY, max_size=8),
    ).map("".join),
    st.sampled_from(["", "k" * 65]),
)
bad_values = st.one_of(
    st.integers(min_value=2**63, max_value=2**80),
    st.integers(min_value=-(2**80), max_value=-(2**63) - 1),
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.just("lone \ud800 surrogate"),
)
bad_items = st.one_of(st.tuples(bad_keys, good_values), st.tuples(good_keys, bad_values))
metadata = st.tuples(
    st.dictionaries(good_keys, good_values, max_size=3), st.lists(bad_items, max_size=1)
).map(lambda parts: {**parts[0], **dict(parts[1])})
contents = st.one_of(
    st.text(min_size=1, max_size=60).filter(str.strip), st.sampled_from(["\udfff", "   ", ""])
)
writes = st.fixed_dictionaries({"content": contents, "metadata": metadata})


def _same(written: Any, read: Any) -> bool:
    """Equal as JSON values (floats compared exactly, as stored)."""
    if isinstance(written, float) and isinstance(read, float):
        return written == read or (math.isnan(written) and math.isnan(read))
    return bool(written == read and type(written) is type(read))


def test_every_accepted_write_reaches_a_terminal_status(stack: MemoryStack) -> None:
    accepted: dict[str, dict[str, Any]] = {}
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(body=writes)
        def one_write(body: dict[str, Any]) -> None:
            raw = json.dumps({**body, "allow_duplicate": True}, allow_nan=True)
            response = client.post(
                f"/v1/agents/{agent}/memories",
                content=raw,
                headers={"content-type": "application/json"},
            )
            assert response.status_code in {202, 422}, (response.status_code, response.text)
            if response.status_code == 202:
                accepted[response.json()["memory_id"]] = body.get("metadata", {})

        one_write()

        def settled() -> dict[str, dict[str, Any]] | None:
            found = {
                memory_id: client.get(f"/v1/agents/{agent}/memories/{memory_id}").json()
                for memory_id in accepted
            }
            return found if all(f.get("status") in TERMINAL for f in found.values()) else None

        found = until(settled, f"{len(accepted)} accepted writes to settle", 120, 0.5)
        for memory_id, metadata in accepted.items():
            read = found[memory_id].get("metadata") or {}
            assert read.keys() == metadata.keys(), memory_id
            assert all(_same(metadata[k], read[k]) for k in metadata), memory_id
