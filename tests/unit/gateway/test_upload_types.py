"""An upload sent without a type is typed by its file extension; only an unknown one is a 415."""

from __future__ import annotations

import pytest

from engram_client.uploads import MIME_BY_SUFFIX as CLIENT_TABLE
from engram_events.mimes import MIME_BY_SUFFIX
from engram_gateway.domain.documents import DocumentRejected, resolve_mime

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "untyped", ["", "application/octet-stream", "application/octet-stream; x=1"]
)
def test_an_untyped_part_takes_the_type_its_extension_names(untyped: str) -> None:
    assert resolve_mime(untyped, "suppliers.CSV") == "text/csv"
    assert resolve_mime(untyped, "notes.md") == "text/markdown"
    assert resolve_mime(untyped, "events.jsonl") == "application/x-ndjson"


def test_a_declared_type_is_kept_without_its_parameters() -> None:
    assert resolve_mime("text/plain; charset=utf-8", "data.csv") == "text/plain"


def test_an_unknown_extension_without_a_type_says_what_to_send() -> None:
    with pytest.raises(DocumentRejected) as refused:
        resolve_mime("application/octet-stream", "photo.jpeg")
    assert refused.value.status == 415
    assert ".csv" in refused.value.detail and "text/csv" in refused.value.detail
    assert "type=" in refused.value.detail


def test_the_client_guesses_the_types_the_gateway_reads() -> None:
    assert CLIENT_TABLE == MIME_BY_SUFFIX
