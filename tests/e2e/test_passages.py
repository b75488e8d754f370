"""Documents as people write them, through the whole platform (MiniLM, every service): a
Markdown returns policy uploaded as `curl -F file=@prose.md` is extracted into passages, and
knowledge search answers a question with the right passage first, cited by heading path and
span; a PDF keeps its pages; a new version re-embeds only its changed passages."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from pymongo import MongoClient

from engram_events.topics import Topics
from tests.support.documents import pdf_bytes
from tests.support.kafka import read_all
from tests.support.platform import Platform
from tests.support.polling import until

PROSE = """# Returns policy

You may return most items within 30 days of delivery for a full refund. Items must be unused
and in their original packaging, with the receipt.

Opened electronics are different: they can be returned within 14 days of delivery, and a
restocking fee of 15% applies to them.

## Damaged goods

If an item arrives damaged, contact us within 48 hours with a photo of the damage.
We will send a replacement or refund you in full, including the shipping costs.
"""


def status(api: httpx.Client, document_id: str) -> str:
    return str(api.get(f"/v1/documents/{document_id}").json().get("status"))


def upload(api: httpx.Client, name: str, content: bytes) -> str:
    """Sent as curl -F sends it: a multipart part typed octet-stream."""
    sent = api.post("/v1/documents", files={"file": (name, content, "application/octet-stream")})
    assert sent.status_code == 202, sent.text
    document_id = str(sent.json()["document_id"])
    done = until(
        lambda: status(api, document_id),
        f"{name} extracted",
        timeout=120,
        ready=lambda s: s in {"extracted", "failed"},
    )
    assert done == "extracted", api.get(f"/v1/documents/{document_id}").text
    return document_id


def test_a_prose_policy_is_found_by_a_question_with_its_citation(platform: Platform) -> None:
    with platform.client() as api:
        document_id = upload(api, "prose.md", PROSE.encode())

        listed = api.get(f"/v1/documents/{document_id}/passages")
        assert listed.status_code == 200, listed.text
        passages = listed.json()["passages"]
        assert [p["heading_path"] for p in passages] == [
            ["Returns policy"],
            ["Returns policy", "Damaged goods"],
        ]
        for passage in passages:
            assert PROSE[passage["start"] : passage["end"]] == passage["text"]

        question = {"query": "how long do I have to return opened electronics?", "top_k": 3}

        def answer() -> list[dict[str, Any]]:
            found = api.post("/v1/knowledge/search", json=question)
            assert found.status_code == 200, found.text
            return list(found.json()["results"])

        results = until(
            answer,
            "the passages indexed and found by the question",
            timeout=120,
            ready=lambda hits: any(hit.get("heading_path") == ["Returns policy"] for hit in hits),
        )
        top = results[0]
        assert top["kind"] == "passage", results
        assert top["document_id"] == document_id and top["name"] == "prose.md"
        assert top["heading_path"] == ["Returns policy"]
        assert "within 14 days" in top["text"]
        assert PROSE[top["span"]["start"] : top["span"]["end"]] == top["text"]

        facts_only = api.post("/v1/knowledge/search", json={**question, "kinds": ["fact"]})
        assert facts_only.status_code == 200, facts_only.text
        assert all(r["kind"] == "fact" for r in facts_only.json()["results"])
        unknown = api.post("/v1/knowledge/search", json={**question, "kinds": ["memo"]})
        assert unknown.status_code == 422, unknown.text


def test_a_pdf_becomes_passages_that_keep_their_pages(platform: Platform) -> None:
    content = pdf_bytes(
        [
            ["Shipping terms", "", "Parcels leave the warehouse within two working days."],
            ["Customs", "", "Orders outside the union may owe import duties on arrival."],
        ]
    )
    with platform.client() as api:
        document_id = upload(api, "terms.pdf", content)
        listed = api.get(f"/v1/documents/{document_id}/passages").json()["passages"]
        assert listed[0]["page"] == 1 and listed[-1]["page_end"] == 2
        assert "import duties" in listed[-1]["text"]


def passage_texts(api: httpx.Client, query: str) -> list[str]:
    body = {"query": query, "top_k": 10, "kinds": ["passage"], "min_score": -1.0}
    found = api.post("/v1/knowledge/search", json=body)
    assert found.status_code == 200, found.text
    return [r["text"] for r in found.json()["results"]]


def test_a_new_version_replaces_passages_and_deletion_withdraws_them(platform: Platform) -> None:
    first = "# Warranty\n\nEvery kettle carries a warranty of two years from purchase.\n"
    second = "# Warranty\n\nEvery kettle carries a warranty of five years from purchase.\n"
    with platform.client() as api:
        document_id = upload(api, "warranty.md", first.encode())
        until(lambda: passage_texts(api, "kettle warranty"), "the first version searchable")
        assert upload(api, "warranty.md", second.encode()) == document_id

        def versions() -> list[str]:
            texts = passage_texts(api, "kettle warranty")
            return [t for t in texts if "kettle" in t]

        replaced = until(
            versions,
            "only the second version's passage",
            ready=lambda t: t and all("five years" in x for x in t),
        )
        assert len(replaced) == 1
        listed = api.get(f"/v1/documents/{document_id}/passages").json()["passages"]
        assert [p["text"] for p in listed] == [second.split("\n\n", 1)[1].strip()]

        deleting = api.delete(f"/v1/documents/{document_id}")
        assert deleting.status_code == 202, deleting.text
        job = until(
            lambda: api.get(deleting.json()["status_url"]).json(),
            "the document's prune job to complete",
            timeout=120,
            ready=lambda job: job["status"] == "completed",
        )
        assert job["verified_empty"] is True, job
        assert versions() == []
        assert api.get(f"/v1/documents/{document_id}/passages").status_code == 404


HANDBOOK = {
    "Opening hours": "The shop opens at nine and closes at six on weekdays.",
    "Parking": "Customers park free of charge behind the building for two hours.",
    "Gift cards": "Gift cards never expire and can be spent on anything in the shop.",
    "Loyalty points": "Every euro spent earns one point; a hundred points make a voucher.",
}


def handbook(sections: dict[str, str]) -> bytes:
    return "\n\n".join(f"## {title}\n\n{text}" for title, text in sections.items()).encode()


def searchable(api: httpx.Client, document_id: str) -> dict[str, str]:
    """The document's passages knowledge search can find (so their vectors are stored), by id."""
    body = {"query": "shop", "top_k": 200, "kinds": ["passage"], "min_score": -1.0}
    found = api.post("/v1/knowledge/search", json=body)
    assert found.status_code == 200, found.text
    hits = found.json()["results"]
    return {h["passage_id"]: h["text"] for h in hits if h["document_id"] == document_id}


def listed_ids(api: httpx.Client, document_id: str) -> set[str]:
    listed = api.get(f"/v1/documents/{document_id}/passages")
    assert listed.status_code == 200, listed.text
    return {p["passage_id"] for p in listed.json()["passages"]}


def embeddings_requested_for(platform: Platform, passage_ids: set[str]) -> set[str]:
    """Which of these passages enrichment asked the embedding service to embed."""
    topic = f"{platform.prefix}{Topics.EMBEDDINGS_BULK.value}"
    messages = asyncio.run(read_all(platform.env["KAFKA_BOOTSTRAP_SERVERS"], topic))
    return {
        item["item_id"].rsplit(":", 1)[0]
        for m in messages
        if m and m.get("event_type") == "embedding.bulk_requested"
        for item in m["payload"]["items"]
        if item["item_id"].rsplit(":", 1)[0] in passage_ids
    }


def passage_vectors_counted(platform: Platform) -> dict[str, float]:
    """Enrichment's reused/requested passage-vector counts in the local metrics store."""
    db = MongoClient[dict[str, Any]](platform.env["MONGODB_URI"])[
        f"{platform.env['ENGRAM_DATABASE_PREFIX']}telemetry"
    ]
    points = db.metrics.find(
        {"name": "engram.enrichment.passage_vectors", "service": "engram-enrichment"}
    )
    counts: dict[str, float] = {}
    for point in points:
        outcome = point["labels"]["outcome"]
        counts[outcome] = counts.get(outcome, 0) + point["value"]
    return counts


def test_a_changed_version_re_embeds_only_its_changed_passages(platform: Platform) -> None:
    changed = {**HANDBOOK, "Parking": "Customers park free of charge behind the building all day."}
    with platform.client() as api:
        document_id = upload(api, "handbook.md", handbook(HANDBOOK))
        first = listed_ids(api, document_id)
        assert len(first) == len(HANDBOOK)
        until(
            lambda: searchable(api, document_id),
            "every passage of the first version searchable",
            timeout=120,
            ready=lambda found: set(found) == first,
        )
        assert embeddings_requested_for(platform, first) == first

        assert upload(api, "handbook.md", handbook(changed)) == document_id
        second = until(
            lambda: listed_ids(api, document_id),
            "the second version's passages listed",
            timeout=120,
            ready=lambda ids: ids != first,
        )
        assert len(second) == len(HANDBOOK) and not second & first
        found = until(
            lambda: searchable(api, document_id),
            "only the second version's passages searchable",
            timeout=120,
            ready=lambda found: set(found) == second,
        )
        assert changed["Parking"] in found.values()
        assert HANDBOOK["Parking"] not in found.values()
        [parking] = [pid for pid, text in found.items() if text == changed["Parking"]]
        assert embeddings_requested_for(platform, second) == {parking}
        until(
            lambda: passage_vectors_counted(platform).get("reused"),
            "enrichment's count of reused vectors",
            timeout=60,
            ready=lambda reused: reused == len(HANDBOOK) - 1,
        )

        deleting = api.delete(f"/v1/documents/{document_id}")
        assert deleting.status_code == 202, deleting.text
        job = until(
            lambda: api.get(deleting.json()["status_url"]).json(),
            "the document's prune job to complete",
            timeout=120,
            ready=lambda job: job["status"] == "completed",
        )
        assert job["verified_empty"] is True, job
        left = job["verification"]["references"]["enrichment"]
        assert (left["passages"], left["passage_vectors"]) == (0, 0), job
        assert searchable(api, document_id) == {}
        assert api.get(f"/v1/documents/{document_id}/passages").status_code == 404
