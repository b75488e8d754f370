"""What each endpoint sends: bodies, paths and which calls are safe to retry."""

from __future__ import annotations

import base64

import pytest

from engram_client import calls
from engram_client.cli.reindex import progress_line, progress_lines

pytestmark = pytest.mark.unit


def test_text_goes_as_text_and_bytes_as_base64() -> None:
    as_text = calls.upload_document("a.csv", "id\n1\n", "text/csv", multipart=False)
    as_bytes = calls.upload_document("a.csv", b"id\n1\n", "text/csv", multipart=False)
    as_form = calls.upload_document("a.csv", "id\n1\n", "text/csv", multipart=True)
    assert as_text.json == {"name": "a.csv", "mime": "text/csv", "text": "id\n1\n"}
    assert base64.b64decode(as_bytes.json["content_base64"]) == b"id\n1\n"
    assert as_form.files == {"file": ("a.csv", b"id\n1\n", "text/csv")}
    assert as_form.data == {"name": "a.csv", "mime": "text/csv"}


def test_resolve_keeps_by_fact_or_by_value_even_a_null_value() -> None:
    by_fact = calls.resolve_contradiction("ctr_1", keep="fact_1", value=None, has_value=False)
    by_null = calls.resolve_contradiction("ctr_1", keep=None, value=None, has_value=True)
    assert by_fact.json == {"keep": "fact_1"}
    assert by_null.json == {"value": None}
    assert by_fact.path == "/v1/knowledge/contradictions/ctr_1/resolve"


def test_a_curators_edit_is_a_put_or_delete_on_the_fact_and_never_repeated() -> None:
    put = calls.assert_fact("carrier:c1", "hq city", "Oslo", "called them")
    withdraw_all = calls.withdraw_fact("carrier:c1", "hq", "moved", value=None, has_value=False)
    withdraw_null = calls.withdraw_fact("carrier:c1", "hq", "moved", value=None, has_value=True)
    assert (put.method, put.path) == ("PUT", "/v1/knowledge/entities/carrier:c1/facts/hq%20city")
    assert put.json == {"value": "Oslo", "reason": "called them"}
    assert withdraw_all.method == "DELETE" and withdraw_all.json == {"reason": "moved"}
    assert withdraw_null.json == {"reason": "moved", "value": None}
    assert not put.retry_safe and not withdraw_all.retry_safe


def test_ids_are_one_path_segment_and_entity_colons_stay_readable() -> None:
    assert calls.get_entity("carrier:c1").path == "/v1/knowledge/entities/carrier:c1"
    assert calls.get_document("../x").path == "/v1/documents/..%2Fx"


def test_prune_sends_only_the_chosen_selection() -> None:
    assert calls.start_prune(older_than_days=30, record_ids=None, filter=None).json == {
        "older_than_days": 30
    }
    by_doc = calls.start_prune(older_than_days=None, record_ids=None, filter={"document_id": "d"})
    assert by_doc.json == {"filter": {"document_id": "d"}}


@pytest.mark.parametrize(
    ("call", "safe"),
    [
        (calls.list_agents(), True),
        (calls.create_agent("x"), False),
        (calls.start_prune(older_than_days=1, record_ids=None, filter=None), False),
        (calls.delete_document("doc_1"), False),
        (calls.recall("a", "q", top_k=5, min_score=None, types=None), True),
        (calls.upload_document("a.csv", "x", "text/csv", multipart=False), True),
        (
            calls.import_records(
                "carrier", [{"id": "1"}], source="s", key_field=None, idempotency_key=None
            ),
            True,
        ),
    ],
)
def test_retry_safety_per_endpoint(call: calls.Call[object], safe: bool) -> None:
    assert call.retry_safe is safe


def test_health_and_readiness_need_no_key() -> None:
    assert not calls.health().authenticated and not calls.ready().authenticated
    assert not calls.ready().retry_safe, "a 503 from /readyz is the answer, not a retry"


def test_knowledge_search_sends_the_mode_only_when_given() -> None:
    plain = calls.search_knowledge("SKU-4585", top_k=3, min_score=None)
    lexical = calls.search_knowledge("SKU-4585", top_k=3, min_score=0.2, mode="lexical")
    assert plain.json == {"query": "SKU-4585", "top_k": 3}
    assert lexical.json == {"query": "SKU-4585", "top_k": 3, "min_score": 0.2, "mode": "lexical"}


def test_the_tenants_dead_letters_are_read_and_replayed_under_v1() -> None:
    listed = calls.tenant_dead_letters(10)
    assert (listed.method, listed.path, listed.params) == ("GET", "/v1/dead-letters", {"limit": 10})
    letters = listed.parse(
        {
            "dead_letters": [
                {
                    "letter_id": "0-4",
                    "consumer": "memory",
                    "error_type": "BulkWriteError",
                    "reason": "BulkWriteError: write error codes 2",
                    "attempts": 1,
                    "failed_at": "2026-12-05T00:00:00+00:00",
                    "item": {"type": "memory", "id": "mem_1"},
                }
            ]
        }
    )
    assert letters[0].item is not None and letters[0].item.id == "mem_1"
    replay = calls.replay_dead_letter("0-4")
    assert (replay.method, replay.path, replay.retry_safe) == (
        "POST",
        "/v1/dead-letters/0-4:replay",
        False,
    )


PASSAGE_HIT = {
    "kind": "passage",
    "score": 0.71,
    "passage_id": "psg_1",
    "document_id": "doc_1",
    "version": "v1",
    "name": "terms.pdf",
    "heading_path": ["Returns policy"],
    "page": 2,
    "page_end": 2,
    "span": {"start": 10, "end": 52},
    "text": "Opened electronics: 14 days.",
    "scores": {"fused": 0.016, "dense": 0.71},
}


def test_knowledge_search_sends_kinds_and_reads_passage_citations() -> None:
    call = calls.search_knowledge("returns", top_k=3, min_score=None, kinds=["passage"])
    assert call.json == {"query": "returns", "top_k": 3, "kinds": ["passage"]}
    (hit,) = call.parse({"results": [PASSAGE_HIT]}).results
    assert (hit.document_id, hit.version, hit.name) == ("doc_1", "v1", "terms.pdf")
    assert hit.heading_path == ["Returns policy"] and hit.page == 2
    assert hit.span is not None and (hit.span.start, hit.span.end) == (10, 52)
    assert hit.text == "Opened electronics: 14 days."


def test_a_documents_passages_are_a_retry_safe_paged_read() -> None:
    call = calls.list_passages("doc_1", after=4, limit=2)
    assert (call.method, call.path, call.params, call.retry_safe) == (
        "GET",
        "/v1/documents/doc_1/passages",
        {"after": 4, "limit": 2},
        True,
    )
    page = call.parse(
        {
            "document_id": "doc_1",
            "version": "v1",
            "name": "terms.pdf",
            "passages": [
                {
                    "passage_id": "psg_1",
                    "ordinal": 5,
                    "heading_path": [],
                    "start": 0,
                    "end": 6,
                    "page": None,
                    "page_end": None,
                    "text": "Terms.",
                    "text_sha256": "ab",
                }
            ],
            "next_after": None,
        }
    )
    assert page.passages[0].ordinal == 5 and page.passages[0].text == "Terms."


def test_a_reindex_is_started_once_and_its_progress_read_under_v1_ops() -> None:
    started = calls.start_reindex("hashing", 128)
    assert (started.method, started.path, started.retry_safe) == ("POST", "/v1/ops/reindex", False)
    assert started.json == {"embedder": "hashing", "hashing_dimension": 128}
    assert calls.start_reindex("bge-small").json == {"embedder": "bge-small"}
    progress = calls.reindex_progress()
    assert (progress.method, progress.path, progress.retry_safe) == ("GET", "/v1/ops/reindex", True)
    assert progress.parse({"state": "none"}) == {"state": "none"}


RUNNING = {
    "state": "running",
    "done": 40,
    "total": 100,
    "rate": 12.5,
    "seconds": 3.2,
    "target_collection": "memories-abc",
    "embedder": "bge-small",
    "error": None,
}


def test_reindex_progress_reads_as_one_line() -> None:
    job = RUNNING
    assert progress_line(job) == "running  40/100  12.5/s  3.2 s  -> memories-abc (bge-small)"
    assert progress_line({"state": "none"}) == "no reindex has run"


def test_relations_and_paths_send_only_what_is_given() -> None:
    listed = calls.entity_relations("carrier:c1", depth=2)
    assert (listed.method, listed.path, listed.params) == (
        "GET",
        "/v1/knowledge/entities/carrier:c1/relations",
        {"depth": 2},
    )
    paths = calls.find_paths("supplier:s1", "carrier:c3", max_depth=3)
    assert paths.json == {"from": "supplier:s1", "to": "carrier:c3", "max_depth": 3}
    assert listed.retry_safe and paths.retry_safe
    expanded = calls.search_knowledge("acme", top_k=3, min_score=None, expand=2)
    assert expanded.json == {"query": "acme", "top_k": 3, "expand": 2}


def test_reindex_progress_of_both_stores_reads_as_a_line_each() -> None:
    memory = {**RUNNING, "eta_seconds": 4.8}
    view = {**memory, "stores": {"memory": memory, "knowledge": {"state": "unavailable"}}}
    assert progress_lines(view).splitlines() == [
        "running  40/100  12.5/s  3.2 s  eta 4.8 s",
        "  memory: running  40/100  12.5/s  3.2 s  -> memories-abc (bge-small)  eta 4.8 s",
        "  knowledge: unavailable",
    ]
    assert calls.start_reindex("hashing", stores=["knowledge"]).json == {
        "embedder": "hashing",
        "stores": ["knowledge"],
    }


def test_reads_in_time_send_valid_at_and_as_of_only_when_given() -> None:
    assert calls.get_entity("carrier:c1").params is None
    entity = calls.get_entity("carrier:c1", valid_at="2026-02-01", as_of="2026-03-01T12:00:00Z")
    assert entity.params == {"valid_at": "2026-02-01", "as_of": "2026-03-01T12:00:00Z"}
    listed = calls.entity_relations("carrier:c1", valid_at="2026-02-01")
    assert listed.params == {"valid_at": "2026-02-01"}
