"""What the composition root built, handed to every route as one typed dependency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends

from engram_gateway.config import GatewaySettings
from engram_gateway.ports import (
    AgentRegistry,
    TenantLimitReads,
)
from engram_gateway.service.audit import AuditTrail
from engram_gateway.service.curation import Curation
from engram_gateway.service.dead_letters import DeadLetterOffice
from engram_gateway.service.document_deletion import DocumentDeletion
from engram_gateway.service.intake import Intake
from engram_gateway.service.keys import KeyManagement
from engram_gateway.service.lineage import Lineage
from engram_gateway.service.memory_edits import MemoryEdits
from engram_gateway.service.memory_writes import MemoryWrites
from engram_gateway.service.ops_views import OpsViews
from engram_gateway.service.owned import OwnedReads
from engram_gateway.service.owner_answers import OwnerAnswers
from engram_gateway.service.pruning import Pruning
from engram_gateway.service.rate_limiting import RateLimiter
from engram_gateway.service.reindex import Reindexes
from engram_gateway.service.sources import SourceCheck
from engram_gateway.service.tenant_export import TenantExport
from engram_gateway.service.tenant_import import TenantImport
from engram_platform.dependencies import provider
from engram_platform.outbox import Outbox


@dataclass(frozen=True)
class GatewayDeps:
    """The gateway's clients and use cases, built once in the lifespan."""

    settings: GatewaySettings
    registry: AgentRegistry
    keys: KeyManagement
    """A tenant's key lifecycle, and each key's last use."""
    answers: OwnerAnswers
    """An owning service's answer passed on: its body, its errors as problems, else a 503."""
    owned: OwnedReads
    """An item's view from its owner, or `pending` while only the submission log knows it."""
    lineage: Lineage
    reindexes: Reindexes
    intake: Intake
    """Accepts writes: publishes their events, then notes them as submitted."""
    memory_writes: MemoryWrites
    memory_edits: MemoryEdits
    """Edits as superseding versions, one winner per version, and a memory's history."""
    sources: SourceCheck
    """Checks the ids a memory write names (`derived_from`, `supersedes`)."""
    outbox: Outbox
    prune: Pruning
    document_deletion: DocumentDeletion
    """A document's prune job, once ingest or the submission log knows the document."""
    dead_letters: DeadLetterOffice
    """A tenant's dead letters, shown without their messages and replayed once."""
    ops: OpsViews
    """What the ops dashboard shows: the pipeline, traces, prune jobs and dead letters."""
    rate_limiter: RateLimiter
    tenant_limits: TenantLimitReads
    curation: Curation
    """A curator's fact edits, published as `fact.edit_requested`."""
    tenant_export: TenantExport
    tenant_import: TenantImport
    """A tenant's agents, rules and live memories out as NDJSON, and back in."""
    audit: AuditTrail
    """Audited actions, recorded before they are answered, and the tenant's log."""


Deps = Annotated[GatewayDeps, Depends(provider(GatewayDeps))]
