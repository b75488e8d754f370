"""An answer encoded once: JSON bytes straight from the handler's dict.

A route that returns a dict has FastAPI walk it through `jsonable_encoder` before the JSON
encoder runs: for a page of 100 relations with their support that walk cost enrichment 7-12 ms
against ~1 ms for the encoding itself. `encoded` writes the same JSON (dates and times as ISO
8601, as `jsonable_encoder` writes them; anything else unusual through `jsonable_encoder`) in
one pass, with the encoder settings of FastAPI's own `JSONResponse`.
"""

from __future__ import annotations

import json
from datetime import date, datetime, time
from typing import Any

from fastapi.encoders import jsonable_encoder
from fastapi.responses import Response


def _default(value: Any) -> Any:
    """What the JSON encoder cannot write by itself, as `jsonable_encoder` would write it."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return jsonable_encoder(value)


def json_bytes(body: Any) -> bytes:
    """The body's JSON: compact, UTF-8, no NaN or infinities (a ValueError, as FastAPI's)."""
    return json.dumps(
        body, default=_default, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    ).encode("utf-8")


def encoded(body: Any, status_code: int = 200) -> Response:
    """A JSON response of the body, encoded once."""
    return Response(json_bytes(body), status_code=status_code, media_type="application/json")
