"""Deleting a document: a prune job tombstones it and everything derived from it, and the
tenant's document quota gets it back."""

from __future__ import annotations

from engram_events.payloads.prune import PruneSelector
from engram_gateway.ports import OwningServices, SubmissionLog
from engram_gateway.service.intake import Intake
from engram_gateway.service.pruning import Pruning
from engram_platform.problems import Problem


class DocumentDeletion:
    """Starts a document's prune job once the document is known: held by ingest, or an upload
    the gateway accepted that ingest has not stored yet."""

    def __init__(
        self,
        owners: OwningServices,
        submissions: SubmissionLog,
        pruning: Pruning,
        intake: Intake,
    ) -> None:
        self.owners = owners
        self.submissions = submissions
        self.pruning = pruning
        self.intake = intake

    async def delete(self, tenant_id: str, doc_id: str) -> str:
        """The prune job's id; 404 for a document never accepted, 409 for one already
        deleted, 503 when ingest cannot say."""
        response = await self.owners.request(
            "ingest", "GET", f"/internal/v1/documents/{doc_id}", tenant_id=tenant_id
        )
        if response.status_code == 200:
            if response.json().get("status") == "deleted":
                raise Problem(409, "already-deleted", "the document is already deleted")
        elif response.status_code == 404:
            if await self.submissions.get(tenant_id, "document", doc_id) is None:
                raise Problem(404, detail="no such document")
        else:
            raise Problem(503, "service-unavailable", "the ingest service could not answer")
        selector = PruneSelector(document_id=doc_id)
        job_id = await self.pruning.start(tenant_id, "document", selector)
        await self.intake.release(tenant_id, "document", doc_id)
        return job_id
