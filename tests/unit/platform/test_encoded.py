"""An answer encoded once writes the bytes FastAPI's own path (jsonable_encoder, then its
JSONResponse) writes for the same dict."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time
from enum import Enum
from typing import Any

import pytest
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from engram_platform.encoded import encoded, json_bytes

pytestmark = pytest.mark.unit


class Kind(Enum):
    SUPPLIER = "supplier"


def fastapi_bytes(body: Any) -> bytes:
    return bytes(JSONResponse(jsonable_encoder(body)).body)


@pytest.mark.parametrize(
    "body",
    [
        {"relations": [], "next_cursor": None, "truncated": False},
        {
            "relation_id": "shipment:sh1:carrier_id:ab",
            "value": "c895",
            "depth": 2,
            "score": 0.25,
            "support": [
                {
                    "recorded_at": datetime(2026, 12, 6, 12, 53, 0, 123000),
                    "valid_from": datetime(2026, 1, 1, tzinfo=UTC),
                    "on": date(2026, 12, 6),
                    "at": time(9, 30),
                    "passage_ids": (),
                }
            ],
        },
        {"names": ["Zoë", "東京", "\u2028"], "kind": Kind.SUPPLIER, "nested": {"a": [1, [2, {}]]}},
    ],
)
def test_the_bytes_are_fastapis(body: dict[str, Any]) -> None:
    assert json_bytes(body) == fastapi_bytes(body)


def test_a_response_carries_them_as_json() -> None:
    response = encoded({"paths": [], "length": 0}, status_code=200)
    assert response.body == b'{"paths":[],"length":0}'
    assert response.media_type == "application/json"


def test_no_nan_or_infinity_is_written() -> None:
    for number in (math.nan, math.inf):
        with pytest.raises(ValueError):
            json_bytes({"value": number})
