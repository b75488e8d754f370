"""One write contract, enforced at the door: whatever storage could not hold as given is a 422
naming the field, never a 202 that a consumer later fails on, a silent change, or a 5xx.

Bodies are sent as raw JSON text where they hold what Python's encoder refuses to write
(NaN, Infinity, lone surrogates), exactly as a client in another language would send them.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.integration.memory.conftest import MemoryStack, new_agent, wait_status, write

pytestmark = pytest.mark.shared_stack

PROBLEM = "application/problem+json"
BIG = 2**70
DEEP = "[" * 100_000 + "]" * 100_000


def _post(client: httpx.Client, path: str, raw: str) -> httpx.Response:
    """POST a JSON body as given, byte for byte."""
    return client.post(path, content=raw, headers={"content-type": "application/json"})


def _refused(response: httpx.Response, *where: str) -> list[list[str]]:
    """A 422 problem whose errors name a location containing every part of `where`."""
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    locations = [[str(p) for p in e["loc"]] for e in body.get("errors", [])]
    assert any(all(part in loc for part in where) for loc in locations), locations
    return locations


BAD_KEYS = ["a.b", "source.url", "$where", ".", "", "x\u0000y", "k" * 65, "é", "with space"]
BAD_VALUES = [
    ("NaN", "non_finite_number"),
    ("Infinity", "non_finite_number"),
    ("-Infinity", "non_finite_number"),
    ("1e400", "non_finite_number"),
    (str(BIG), "int64_overflow"),
    (str(-(2**63) - 1), "int64_overflow"),
    ('"\\ud800"', "invalid_unicode"),
]


def test_metadata_storage_cannot_keep_is_refused_by_name(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        path = f"/v1/agents/{agent}/memories"
        for key in BAD_KEYS:
            response = client.post(path, json={"content": "x", "metadata": {key: 1}})
            _refused(response, "body", "metadata")
        for raw_value, kind in BAD_VALUES:
            response = _post(client, path, f'{{"content": "x", "metadata": {{"i": {raw_value}}}}}')
            _refused(response, "metadata", "i")
            assert kind in [e["type"] for e in response.json()["errors"]], raw_value
        listed = client.get(f"/v1/agents/{agent}/memories").json()["memories"]
        assert listed == [], "nothing was accepted, so nothing can stay pending"


def test_every_write_route_refuses_what_a_consumer_would(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        batch = {"memories": [{"content": "fine"}, {"content": "bad", "metadata": {"x.y": 1}}]}
        _refused(client.post(f"/v1/agents/{agent}/memories:batch", json=batch), "1", "metadata")
        conversation = {"messages": [{"role": "user", "content": "hi"}], "metadata": {"x.y": 1}}
        _refused(client.post(f"/v1/agents/{agent}/conversations", json=conversation), "metadata")
        _refused(
            _post(client, f"/v1/agents/{agent}/memories", '{"content": "\\ud800 lone"}'),
            "content",
        )
        _refused(
            _post(
                client,
                f"/v1/agents/{agent}/conversations",
                '{"messages": [{"role": "user", "content": "\\udfff"}]}',
            ),
            "messages",
        )
        rows = f'{{"record_type": "carrier", "source": "s", "rows": [{{"id": "c1", "n": {BIG}}}]}}'
        _refused(_post(client, "/v1/records:import", rows), "rows")
        nan_rows = '{"record_type": "carrier", "source": "s", "rows": [{"id": "c1", "n": NaN}]}'
        _refused(_post(client, "/v1/records:import", nan_rows), "rows")
        document = '{"name": "\\ud800.txt", "mime": "text/plain", "text": "hello"}'
        refused = _post(client, "/v1/documents", document)
        assert refused.status_code == 422, refused.text
        assert "Invalid JSON" in refused.json()["errors"][0]["msg"], "refused as it is parsed"
        _refused(_post(client, "/v1/agents", '{"name": "\\ud800"}'), "name")


def test_filters_with_numbers_storage_cannot_hold_are_422_not_5xx(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        for raw_bound in ["NaN", "Infinity", "1e400", "1" * 30]:
            raw_filter = f'{{"metadata": {{"i": {{"gte": {raw_bound}}}}}}}'
            recall = f'{{"query": "anything", "filter": {raw_filter}}}'
            _refused(_post(client, f"/v1/agents/{agent}/recall", recall), "filter", "metadata")
            counted = client.get(
                f"/v1/agents/{agent}/memories:count", params={"filter": raw_filter}
            )
            _refused(counted, "query", "filter")
            listed = client.get(f"/v1/agents/{agent}/memories", params={"filter": raw_filter})
            _refused(listed, "query", "filter")
        assert client.get("/v1/agents").status_code == 200, "the connection is still usable"


def test_a_deeply_nested_body_is_a_client_error(stack: MemoryStack) -> None:
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        response = _post(client, f"/v1/agents/{agent}/memories", f'{{"content": {DEEP}}}')
        assert 400 <= response.status_code < 500, response.text
        assert response.headers["content-type"].startswith(PROBLEM)


def test_storable_metadata_reads_back_exactly_as_written(stack: MemoryStack) -> None:
    metadata = {
        "source-url": "https://example.com/a.b?c=$d",
        "max_int": 2**63 - 1,
        "min_int": -(2**63),
        "ratio": 0.1,
        "flag": False,
        "nothing": None,
        "K" * 64: "longest key",
    }
    with stack.client(stack.tenant()) as client:
        agent = new_agent(client)
        memory_id = write(client, agent, "carrier c1 ships from Gdansk", metadata=metadata)
        found = wait_status(client, agent, memory_id, {"active"})
        assert found["metadata"] == metadata
        assert json.loads(json.dumps(found["metadata"])) == metadata
