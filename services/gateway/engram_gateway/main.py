"""The gateway's composition root: clients are built in the lifespan, nothing at import."""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI

from engram_events.catalog import TOMBSTONE_APPLIED
from engram_gateway.adapters import prune_jobs, registry
from engram_gateway.adapters.dead_letters import DeadLetterBox
from engram_gateway.adapters.edit_claims import EditClaims
from engram_gateway.adapters.internal import InternalServices
from engram_gateway.adapters.keys import KeyStore
from engram_gateway.adapters.prune_jobs import JOBS, PruneJobs
from engram_gateway.adapters.publisher import EventPublisher
from engram_gateway.adapters.registry import AGENTS, Registry
from engram_gateway.adapters.submissions import Submissions
from engram_gateway.adapters.telemetry import TelemetryReader
from engram_gateway.adapters.tenant_limits import TenantLimits
from engram_gateway.adapters.usage import UsageCounters
from engram_gateway.api import (
    agents,
    audit,
    conversations,
    curation,
    dead_letters,
    documents,
    keys,
    knowledge,
    lineage,
    memories,
    memory_edits,
    memory_writes,
    ops,
    prune,
    rate_limits,
    recall,
    records,
    reindex,
    retention,
    schema_types,
    transfer,
)
from engram_gateway.api.body_limit import BodyLimit
from engram_gateway.api.dependencies import GatewayDeps
from engram_gateway.api.lean import LeanPublicRoutes
from engram_gateway.config import GatewaySettings
from engram_gateway.domain.quotas import Usage
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
from engram_gateway.service.prune_completion import PruneCompletion
from engram_gateway.service.pruning import Pruning
from engram_gateway.service.quotas import Quotas
from engram_gateway.service.rate_limiting import RateLimiter
from engram_gateway.service.reindex import Reindexes
from engram_gateway.service.sources import SourceCheck
from engram_gateway.service.tenant_export import TenantExport
from engram_gateway.service.tenant_import import TenantImport
from engram_platform.app import ServiceApp, service_app
from engram_platform.audit import INDEXES as AUDIT_INDEXES
from engram_platform.audit import AuditLog
from engram_platform.dependencies import install
from engram_platform.indexes import merge
from engram_platform.kafka_security import kafka_security_options
from engram_platform.metrics import PipelineMetrics
from engram_platform.runtime import ConnectedRuntime, Runtime

SERVICE = "gateway"
MISSING_TOKEN = (
    "ENGRAM_INTERNAL_TOKEN is not set: the gateway reads through the services' internal APIs, "
    "which refuse calls without it; set the same random value on every service"
)
MAX_JSON_BYTES = 1024 * 1024
"""Any other body: a memory is at most 64k characters, a query 8k."""
MAX_PRUNE_BYTES = 32 * 1024 * 1024
"""A prune may name up to 100,000 record ids of up to 256 characters each."""


class MissingInternalToken(RuntimeError):
    """The gateway will not start without the token its reads need: closed, and said so."""


def limited(*routers: APIRouter) -> APIRouter:
    """The public routes, each charged to its tenant's rate limit after authentication; a request
    is matched against them in order, so the hottest (single memory writes, then recall) go
    first."""
    public = APIRouter(dependencies=[Depends(rate_limits.limited)])
    for router in routers:
        public.include_router(router)
    return public


def create_app(settings: GatewaySettings | None = None, *, install_global: bool = True) -> FastAPI:
    """The public HTTP API; tests pass settings with a unique database and topic prefix."""
    settings = settings or GatewaySettings()
    if settings.internal_token is None:
        raise MissingInternalToken(MISSING_TOKEN)
    internal_token = settings.internal_token.get_secret_value()
    runtime = Runtime.build(
        SERVICE,
        settings,
        install_global=install_global,
        recover_collections=[JOBS, AGENTS],
        indexes=merge(registry.INDEXES, prune_jobs.INDEXES, AUDIT_INDEXES),
    )

    completion_of_this_start: list[PruneCompletion] = []

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        owners = InternalServices(
            {
                "ingest": settings.ingest_url,
                "extraction": settings.extraction_url,
                "memory": settings.memory_url,
                "enrichment": settings.enrichment_url,
            },
            token=internal_token,
            timeout=settings.internal_timeout_seconds,
        )
        jobs = PruneJobs(rt.db, rt.outbox)
        completion = PruneCompletion(
            jobs,
            owners,
            verify_grace_seconds=settings.prune_verify_grace_seconds,
            metrics=PipelineMetrics("gateway", rt.meter_provider),
        )
        rt.consumer.on(TOMBSTONE_APPLIED, completion.on_applied, batch=completion.on_applied_batch)
        completion_of_this_start[:] = [completion]
        submissions = Submissions(rt.db)
        quotas = Quotas(
            UsageCounters(rt.db),
            Usage(
                memories=settings.quota_memories,
                documents=settings.quota_documents,
                document_bytes=settings.quota_document_bytes,
            ),
            limits_seconds=settings.registry_cache_seconds,
        )
        intake = Intake(EventPublisher(rt.broker, settings.topic_prefix), submissions, quotas)
        registry = Registry(
            rt.db,
            cache_seconds=settings.registry_cache_seconds,
            key_seconds=settings.key_cache_seconds,
        )
        writes = MemoryWrites(owners, intake)
        pruning = Pruning(jobs)
        letters = DeadLetterOffice(
            DeadLetterBox(
                bootstrap=settings.kafka_bootstrap_servers,
                security=kafka_security_options(settings),
                topic_prefix=settings.topic_prefix,
                db=rt.db,
                publisher=rt.broker,
            )
        )
        trail = AuditTrail(AuditLog(rt.db), owners)
        install(
            app,
            GatewayDeps(
                settings=settings,
                registry=registry,
                keys=KeyManagement(KeyStore(rt.db), registry),
                answers=OwnerAnswers(owners),
                owned=OwnedReads(owners, submissions),
                lineage=Lineage(owners),
                reindexes=Reindexes(owners),
                intake=intake,
                memory_writes=writes,
                memory_edits=MemoryEdits(owners, submissions, EditClaims(rt.db), writes),
                sources=SourceCheck(owners, submissions),
                outbox=rt.outbox,
                prune=pruning,
                document_deletion=DocumentDeletion(owners, submissions, pruning, intake),
                dead_letters=letters,
                ops=OpsViews(
                    TelemetryReader(rt.mongo[settings.telemetry_database]), letters, pruning
                ),
                rate_limiter=RateLimiter(settings.rate_limit_defaults()),
                tenant_limits=TenantLimits(rt.db, cache_seconds=settings.registry_cache_seconds),
                curation=Curation(intake.events),
                tenant_export=TenantExport(owners),
                tenant_import=TenantImport(
                    owners, registry, writes, settings.memory_limits, intake.events, trail
                ),
                audit=trail,
            ),
        )

    async def finalize_prune_jobs() -> None:
        """Complete prune jobs as their acknowledgements arrive (the completion `register` built)."""
        await completion_of_this_start[0].run_finalizer()

    app = service_app(
        runtime,
        title="Engram",
        register=register,
        background=[finalize_prune_jobs],
        routers=[
            limited(
                memory_writes.router,
                recall.router,
                agents.router,
                documents.router,
                keys.router,
                prune.router,
                curation.router,
                knowledge.router,
                records.router,
                schema_types.router,
                memory_edits.router,
                conversations.router,
                memories.router,
                retention.router,
                lineage.router,
                dead_letters.router,
                reindex.router,
                transfer.router,
                audit.router,
            ),
            ops.router,
        ],
    )
    app.version = "1.0.0"
    if settings.lean_routes and isinstance(app, ServiceApp):
        app.lean = LeanPublicRoutes(
            [memory_writes.LEAN_WRITE, recall.LEAN_RECALL],
            runtime.tracer_provider,
            runtime.meter_provider,
            max_body=MAX_JSON_BYTES,
        )
    app.add_middleware(rate_limits.RateLimitHeaders)
    app.add_middleware(
        BodyLimit,
        default=MAX_JSON_BYTES,
        by_path={
            "/v1/documents": documents.max_request_bytes(settings.max_document_bytes),
            "/v1/records:import": records.MAX_IMPORT_BYTES,
            "/v1/prune": MAX_PRUNE_BYTES,
            "/v1/import": transfer.MAX_IMPORT_BYTES,
        },
    )
    return app
