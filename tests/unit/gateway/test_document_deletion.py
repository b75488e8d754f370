"""A document is deleted by a prune job once it is known (stored by ingest, or an upload the
gateway accepted); unknown is 404, deleted already is 409, and ingest failing is a 503, never a
404 for a document that may exist."""

from __future__ import annotations

from typing import Any, cast

import httpx
import pytest

from engram_gateway.service.document_deletion import DocumentDeletion
from engram_gateway.service.intake import Intake
from engram_gateway.service.pruning import Pruning
from engram_platform.problems import Problem

pytestmark = pytest.mark.unit

T = "tnt_a"


class Ingest:
    """Ingest answering every document GET with one status and body."""

    def __init__(self, status: int, body: dict[str, Any] | None = None) -> None:
        self.status, self.body = status, body or {}
        self.asked: list[str] = []

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response:
        self.asked.append(f"{service} {method} {path} {tenant_id}")
        return httpx.Response(self.status, json=self.body)


class Submissions:
    """The gateway's notes of accepted uploads; a release hands the note back once."""

    def __init__(self, notes: dict[tuple[str, str, str], dict[str, Any]]) -> None:
        self.notes = notes
        self.released: list[tuple[str, str, str]] = []

    async def get(self, tenant_id: str, kind: str, item_id: str) -> dict[str, Any] | None:
        return self.notes.get((tenant_id, kind, item_id))

    async def release(self, tenant_id: str, kind: str, item_id: str) -> dict[str, Any] | None:
        self.released.append((tenant_id, kind, item_id))
        return self.notes.pop((tenant_id, kind, item_id), None)


class Jobs:
    """Prune jobs opened, with the event each stages."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, str, dict[str, Any], str]] = []

    async def open(
        self, tenant_id: str, job_id: str, kind: str, selector: dict[str, Any], event: Any
    ) -> None:
        self.opened.append((tenant_id, kind, selector, event.event_type))


class NoEvents:
    """A deletion's event is staged with its job, never published on its own."""

    async def publish(self, event: Any) -> None:
        raise AssertionError("published outside the job's outbox")

    async def publish_many(self, events: Any) -> None:
        raise AssertionError("published outside the job's outbox")


def _deletion(ingest: Ingest, submissions: Submissions, jobs: Jobs) -> DocumentDeletion:
    """The use case over the fakes (each has the methods a deletion calls, not whole ports)."""
    intake = Intake(NoEvents(), cast(Any, submissions))
    return DocumentDeletion(
        cast(Any, ingest), cast(Any, submissions), Pruning(cast(Any, jobs)), intake
    )


async def test_a_stored_document_starts_a_document_job_and_gives_its_quota_back() -> None:
    ingest, submissions, jobs = Ingest(200, {"status": "active"}), Submissions({}), Jobs()
    job_id = await _deletion(ingest, submissions, jobs).delete(T, "doc_1")
    assert job_id.startswith("prj_")
    assert jobs.opened == [(T, "document", {"document_id": "doc_1"}, "document.deleted")]
    assert submissions.released == [(T, "document", "doc_1")]
    assert ingest.asked == [f"ingest GET /internal/v1/documents/doc_1 {T}"]


async def test_an_accepted_upload_ingest_lacks_yet_is_deleted_too() -> None:
    submissions, jobs = Submissions({(T, "document", "doc_1"): {"size_bytes": 10}}), Jobs()
    await _deletion(Ingest(404), submissions, jobs).delete(T, "doc_1")
    assert [kind for _, kind, _, _ in jobs.opened] == ["document"]


@pytest.mark.parametrize(
    ("ingest", "notes", "status"),
    [
        (Ingest(404), {}, 404),
        (Ingest(404), {("tnt_b", "document", "doc_1"): {}}, 404),
        (Ingest(200, {"status": "deleted"}), {}, 409),
        (Ingest(503), {(T, "document", "doc_1"): {}}, 503),
        (Ingest(500), {}, 503),
    ],
    ids=["never-accepted", "another-tenants", "deleted-already", "ingest-down", "ingest-failing"],
)
async def test_no_job_starts_unless_the_document_is_known_and_live(
    ingest: Ingest, notes: dict[tuple[str, str, str], dict[str, Any]], status: int
) -> None:
    submissions, jobs = Submissions(notes), Jobs()
    with pytest.raises(Problem) as refused:
        await _deletion(ingest, submissions, jobs).delete(T, "doc_1")
    assert refused.value.status == status
    assert jobs.opened == [] and submissions.released == []
