"""Content never reaches logs or span attributes: canaries go in, hashes come out."""

import io
import json
import logging

import pytest

from engram_platform.logs import configure_logging
from engram_platform.retry import RetryPolicy
from engram_platform.tracing import sanitize_attributes

pytestmark = pytest.mark.unit

CANARY = "CANARY-7f3a the customs office closes at 14:00"


def test_log_arguments_and_sensitive_fields_are_redacted() -> None:
    stream = io.StringIO()
    handler = configure_logging("test", "DEBUG", stream=stream)
    try:
        logging.getLogger("t").info(
            "stored %s for %s", CANARY, "agt_1", extra={"content": CANARY, "count": 3}
        )
        try:
            raise ValueError(CANARY)
        except ValueError:
            logging.getLogger("t").exception("failed")
    finally:
        logging.getLogger().removeHandler(handler)
    out = stream.getvalue()
    assert "CANARY" not in out
    first = json.loads(out.splitlines()[0])
    assert "agt_1" in first["msg"] and first["count"] == 3
    assert first["content"].startswith("<redacted sha256:")
    assert json.loads(out.splitlines()[1])["exception"][0] == "builtins.ValueError"


def test_span_attributes_keep_ids_and_drop_content() -> None:
    clean = sanitize_attributes(
        {
            "engram.tenant_id": "tnt_1",
            "engram.count": 4,
            "http.url": "http://x/v1/agents/a/memories?search=CANARY-secret",
            "url.query": "search=CANARY",
            "messaging.message.body": CANARY,
            "note": CANARY,
        }
    )
    assert clean["engram.tenant_id"] == "tnt_1" and clean["engram.count"] == 4
    assert clean["http.url"] == "http://x/v1/agents/a/memories"
    assert "CANARY" not in json.dumps(clean)


def test_each_value_is_judged_even_where_its_key_was_seen_before() -> None:
    first = sanitize_attributes({"note": "id_1", "engram.memory.content": "ok"})
    later = sanitize_attributes({"note": "two\u00a0words", "traceparent": "x" * 200})
    assert first["note"] == "id_1", "a short id passes"
    assert str(first["engram.memory.content"]).startswith("<redacted"), "a content key never does"
    assert str(later["note"]).startswith("<redacted"), "any Unicode space marks content"
    assert later["traceparent"] == "x" * 200


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(max_attempts=5, base_seconds=0.1, max_seconds=0.5)
    delays = [policy.delay(n) for n in range(1, 8)]
    assert 0.05 <= delays[0] <= 0.1
    assert all(d <= 0.5 for d in delays)
    assert delays[-1] >= 0.25
