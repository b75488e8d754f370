"""Bad documents through the whole platform: each one the door can judge (empty, bytes of another
kind than its name) is a 422 saying why; each one only a reader can judge (encrypted, a bomb, a
page nested past the parser's depth, a page too large) ends `failed` with its reason; and a good
document sent after them all is extracted and found, so the stream goes on."""

from __future__ import annotations

import httpx

from tests.support.documents import (
    encrypted_pdf,
    flate_bomb_pdf,
    many_parts_docx,
    nested_html,
    pdf_bytes,
    zip_bomb_docx,
)
from tests.support.platform import Platform
from tests.support.polling import until

GOOD = b"""# Kettle care

Descale the kettle every four weeks with white vinegar, then boil clean water twice.
"""
FAILS_WITH = {
    "secret.pdf": (encrypted_pdf(), "the PDF is encrypted; upload it without a password"),
    "bomb.docx": (zip_bomb_docx(), "the Word document unpacks to more than 104857600 bytes"),
    "parts.docx": (many_parts_docx(), "the Word document holds more than 2000 parts"),
    "bomb.pdf": (flate_bomb_pdf(), "past the reader's limit (a decompression bomb)"),
    "deep.html": (nested_html(200_000), "the HTML page nests elements deeper than 256 levels"),
    "huge.html": (b"<div>" * 2_000_000, "the page exceeds the limit of 5000000 bytes"),
}
REFUSED_WITH = {
    "empty.pdf": (b"", "empty-document", "the document is empty"),
    "terms.docx": (pdf_bytes([["Terms."]]), "content-mismatch", "the content is a PDF"),
    "notes.pdf": (b"Plain words.\n", "content-mismatch", "the content is UTF-8 text, not a PDF"),
}


def send(api: httpx.Client, name: str, content: bytes) -> httpx.Response:
    """Sent as curl -F sends it: a multipart part typed octet-stream."""
    return api.post("/v1/documents", files={"file": (name, content, "application/octet-stream")})


def settled(api: httpx.Client, document_id: str) -> dict[str, object]:
    return dict(
        until(
            lambda: api.get(f"/v1/documents/{document_id}").json(),
            f"{document_id} extracted or failed",
            timeout=180,
            ready=lambda d: d.get("status") in {"extracted", "failed"},
        )
    )


def test_each_bad_document_fails_with_its_reason_and_the_next_one_is_read(
    platform: Platform,
) -> None:
    with platform.client() as api:
        for name, (content, kind, reason) in REFUSED_WITH.items():
            refused = send(api, name, content)
            assert refused.status_code == 422, (name, refused.text)
            assert refused.json()["type"].endswith(kind) and reason in refused.json()["detail"]

        sent = {}
        for name, (content, _) in FAILS_WITH.items():
            accepted = send(api, name, content)
            assert accepted.status_code == 202, (name, accepted.text)
            sent[name] = accepted.json()["document_id"]
        good = send(api, "kettle.md", GOOD)
        assert good.status_code == 202, good.text

        for name, document_id in sent.items():
            done = settled(api, document_id)
            assert done["status"] == "failed", (name, done)
            assert FAILS_WITH[name][1] in str(done["error"]), (name, done)
        assert settled(api, good.json()["document_id"])["status"] == "extracted"

        question = {"query": "how often should I descale the kettle?", "kinds": ["passage"]}
        hits = until(
            lambda: api.post("/v1/knowledge/search", json=question).json()["results"],
            "the good document's passage found",
            timeout=120,
            ready=lambda found: any(h["name"] == "kettle.md" for h in found),
        )
        assert "every four weeks" in hits[0]["text"]
