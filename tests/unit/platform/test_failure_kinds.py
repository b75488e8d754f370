"""Which failures no retry can fix, built as the driver and the local server raise them."""

from __future__ import annotations

from typing import Any

import bson
import pytest
from pydantic import BaseModel, ValidationError
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    DuplicateKeyError,
    ServerSelectionTimeoutError,
    WriteError,
)

from engram_events import MalformedEvent
from engram_platform.retry import Failure, PermanentError, failure_kind, failure_reason

pytestmark = pytest.mark.unit

INVALID_DOT = "invalid key: \"a.b\" (key must not contain '.' sign)"
INVALID_DOLLAR = "invalid key: \"$x\" (key must not start with '$' sign)"


def bulk_error(*errors: dict[str, Any], concern: list[Any] | None = None) -> BulkWriteError:
    """A BulkWriteError with the details an unordered insert_many gets from the local server."""
    return BulkWriteError(
        {
            "writeErrors": list(errors),
            "writeConcernErrors": concern or [],
            "nInserted": 1,
            "nUpserted": 0,
            "nMatched": 0,
            "nModified": 0,
            "nRemoved": 0,
            "upserted": [],
        }
    )


def encoding_error(document: dict[str, Any]) -> Exception:
    """What the driver raises before sending a document BSON cannot hold."""
    try:
        bson.encode(document)
    except Exception as exc:
        return exc
    raise AssertionError("encoded")


def validation_error() -> ValidationError:
    class Strict(BaseModel):
        n: int

    try:
        Strict.model_validate({"n": "not a number"})
    except ValidationError as exc:
        return exc
    raise AssertionError("validated")


@pytest.mark.parametrize(
    "error",
    [
        bulk_error({"index": 1, "code": 2, "errmsg": INVALID_DOT, "op": {"m": {"a.b": 1}}}),
        bulk_error({"index": 0, "code": 2, "errmsg": INVALID_DOLLAR, "op": {"m": {"$x": 1}}}),
        WriteError(INVALID_DOT, 2, {"index": 0, "code": 2, "errmsg": INVALID_DOT}),
        encoding_error({"m": 2**70}),
        encoding_error({"m": {"a\x00b": 1}}),
        encoding_error({"m": "\ud800"}),
        validation_error(),
        PermanentError("content_sha256 does not match the content"),
        MalformedEvent("not an envelope"),
    ],
    ids=[
        "bulk-dotted-key",
        "bulk-dollar-key",
        "write-dotted-key",
        "int-over-8-bytes",
        "nul-in-key",
        "lone-surrogate",
        "validation",
        "permanent-error",
        "poison-message",
    ],
)
def test_what_the_same_input_gets_on_every_attempt_is_permanent(error: Exception) -> None:
    assert failure_kind(error) is Failure.PERMANENT


def test_the_local_servers_errors_are_what_these_tests_build() -> None:
    assert type(encoding_error({"m": 2**70})) is OverflowError
    assert type(encoding_error({"m": {"a\x00b": 1}})).__name__ == "InvalidDocument"


@pytest.mark.parametrize(
    "error",
    [ServerSelectionTimeoutError("no servers"), AutoReconnect("connection reset")],
)
def test_an_unreachable_database_is_an_outage_never_the_inputs_fault(error: Exception) -> None:
    assert failure_kind(error, attempt=5) is Failure.OUTAGE


def test_a_bulk_write_with_any_error_another_attempt_may_not_repeat_is_retried() -> None:
    refused = {"index": 0, "code": 2, "errmsg": INVALID_DOT, "op": {}}
    stepped_down = {"index": 1, "code": 10107, "errmsg": "not primary", "op": {}}
    assert failure_kind(bulk_error(refused, stepped_down)) is Failure.TRANSIENT
    concern = [{"code": 64, "errmsg": "waiting for replication timed out"}]
    assert failure_kind(bulk_error(refused, concern=concern)) is Failure.TRANSIENT


def test_a_duplicate_key_in_a_bulk_insert_is_permanent_but_in_a_bulk_upsert_a_race() -> None:
    inserted = {"index": 0, "code": 11000, "errmsg": "E11000", "op": {"_id": "x", "n": 1}}
    upsert_op = {"q": {"_id": "x"}, "u": {"$set": {"n": 1}}, "upsert": True, "multi": False}
    upserted = {"index": 0, "code": 11000, "errmsg": "E11000", "op": upsert_op}
    assert failure_kind(bulk_error(inserted)) is Failure.PERMANENT
    assert failure_kind(bulk_error(upserted)) is Failure.TRANSIENT


def test_a_single_duplicate_key_gets_one_more_attempt_to_lose_an_upsert_race() -> None:
    duplicate = DuplicateKeyError("E11000 duplicate key", 11000, {"code": 11000})
    assert failure_kind(duplicate, attempt=1) is Failure.TRANSIENT
    assert failure_kind(duplicate, attempt=2) is Failure.PERMANENT


@pytest.mark.parametrize("error", [RuntimeError("bug"), TimeoutError(), KeyError("nModified")])
def test_anything_else_is_retried(error: Exception) -> None:
    assert failure_kind(error) is Failure.TRANSIENT


def test_the_reason_names_the_failure_without_the_inputs_content() -> None:
    secret = "the memory's private words"
    dotted = bulk_error({"index": 0, "code": 2, "errmsg": INVALID_DOT, "op": {"m": secret}})
    assert failure_reason(dotted) == "BulkWriteError: write error codes 2"
    assert failure_reason(encoding_error({"m": 2**70})) == "OverflowError"
    assert failure_reason(validation_error()) == "ValidationError: 1 invalid fields"
    assert secret not in failure_reason(dotted) and secret in str(dotted)
    assert failure_reason(PermanentError("size mismatch")) == "PermanentError: size mismatch"
