"""With a model configured, a fact read from prose cites the passage that states it: through the
whole platform, the stub model answers a record citing passage 2 of a two-section handbook, and
the fact's support, its lineage and the document's passages all name the same passage until the
document is deleted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import Infra
from tests.support.llm_stub import LlmStub
from tests.support.platform import Platform, start_platform, stop_platform
from tests.support.polling import until

HANDBOOK = """# Carriers

We work with a handful of barge operators on the Baltic.

## Acme Freight

Acme Freight, code ACM, sails from its home port of Riga every Tuesday.
"""
ROW = {"type": "carrier", "attributes": {"id": "ACM", "city": "Riga"}, "passages": [2]}


@pytest.fixture(scope="module")
def stub() -> Iterator[LlmStub]:
    server = LlmStub().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def platform(
    infra: Infra, stub: LlmStub, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Platform]:
    """The platform with the LLM extractor pointed at the stub."""
    running = start_platform(
        infra,
        tmp_path_factory.mktemp("platform"),
        ENGRAM_EXTRACTION_LLM_BASE_URL=stub.url,
        ENGRAM_EXTRACTION_LLM_MODEL="configured-model",
    )
    try:
        yield running
    finally:
        stop_platform(running)


def city_facts(api: httpx.Client, **params: str) -> list[dict[str, Any]]:
    found = api.get("/v1/knowledge/entities/carrier:ACM", params=params)
    if found.status_code != 200:
        return []
    return [f for f in found.json()["facts"] if f["attribute"] == "city"]


def test_a_model_fact_cites_the_passage_it_was_read_from(platform: Platform, stub: LlmStub) -> None:
    stub.answer("Acme Freight, code ACM", records=[ROW])
    with platform.client() as api:
        sent = api.post(
            "/v1/documents",
            json={"name": "carriers.md", "mime": "text/markdown", "text": HANDBOOK},
        )
        assert sent.status_code == 202, sent.text
        document_id = sent.json()["document_id"]
        until(
            lambda: api.get(f"/v1/documents/{document_id}").json().get("status"),
            "the handbook extracted",
            timeout=120,
            ready=lambda s: s in {"extracted", "failed"},
        )
        passages = api.get(f"/v1/documents/{document_id}/passages").json()["passages"]
        assert [p["heading_path"] for p in passages] == [
            ["Carriers"],
            ["Carriers", "Acme Freight"],
        ]
        second = passages[1]["passage_id"]

        (fact,) = until(lambda: city_facts(api), "the model's fact derived", timeout=120)
        assert fact["value"] == "Riga"
        assert [(s["document_id"], s["passage_ids"]) for s in fact["support"]] == [
            (document_id, [second])
        ]
        lineage = api.get(f"/v1/lineage/{fact['fact_id']}").json()
        (record,) = lineage["derives_from"]["records"]
        assert record["lineage"]["passage_ids"] == [second]
        assert record["lineage"]["document_id"] == document_id

        deleting = api.delete(f"/v1/documents/{document_id}")
        assert deleting.status_code == 202, deleting.text
        job = until(
            lambda: api.get(deleting.json()["status_url"]).json(),
            "the document's prune job completed",
            timeout=120,
            ready=lambda j: j.get("status") == "completed",
        )
        assert job["verified_empty"] is True, job
        withdrawn = city_facts(api, include_withdrawn="true")
        assert [f["status"] for f in withdrawn] in ([], ["withdrawn"])
