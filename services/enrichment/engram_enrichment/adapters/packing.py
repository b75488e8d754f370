"""Documents stored with a few plain fields and the rest as one BSON value (`packed`).

The local server parses and re-serialises every nested field of a document on each write and
read; the fields queries filter, sort or project on stay plain, everything else travels as one
binary value it does not look into.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection
from datetime import UTC
from typing import Any

import bson
from bson.binary import Binary
from bson.codec_options import CodecOptions

PACKED = "packed"
_UNPACK: CodecOptions[dict[str, Any]] = CodecOptions(tz_aware=True, tzinfo=UTC)


def pack(doc: dict[str, Any], open_fields: Collection[str], *, compress: bool) -> dict[str, Any]:
    """The open fields as they are, everything else as one BSON value (zlib'd if `compress`)."""
    rest = {k: v for k, v in doc.items() if k not in open_fields}
    kept = {k: v for k, v in doc.items() if k in open_fields}
    encoded = bson.encode(rest)
    return {**kept, PACKED: Binary(zlib.compress(encoded, 1) if compress else encoded)}


def unpack(doc: dict[str, Any], *, compressed: bool) -> dict[str, Any]:
    """A stored document as one document again; one stored without a packed value as it is."""
    packed = doc.get(PACKED)
    if packed is None:
        return doc
    raw = zlib.decompress(bytes(packed)) if compressed else bytes(packed)
    rest = bson.decode(raw, codec_options=_UNPACK)
    return {**{k: v for k, v in doc.items() if k != PACKED}, **rest}
