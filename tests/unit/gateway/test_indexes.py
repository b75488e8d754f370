"""Every query the gateway's stores make is served by a declared index and names the tenant,
except the listed operational ones."""

from __future__ import annotations

import zlib
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

import bson
import pytest

from engram_events import new_event
from engram_events.catalog import AGENT_DELETED, PRUNE_REQUESTED
from engram_events.payloads.dlq import DeadLetter
from engram_events.payloads.memories import AgentDeleted
from engram_events.payloads.prune import PruneRequested, PruneSelector
from engram_gateway.adapters import prune_jobs, registry
from engram_gateway.adapters.dead_letters import DeadLetterBox
from engram_gateway.adapters.edit_claims import EditClaims
from engram_gateway.adapters.keys import KeyStore
from engram_gateway.adapters.prune_jobs import ACKS, JOBS, PruneJobs
from engram_gateway.adapters.registry import AGENTS, API_KEYS, Registry
from engram_gateway.adapters.submissions import Submissions
from engram_gateway.adapters.telemetry import TelemetryReader
from engram_gateway.adapters.tenant_limits import TENANTS, TenantLimits
from engram_gateway.adapters.usage import UsageCounters
from engram_gateway.domain.keys import issue_key
from engram_gateway.domain.prune import Ack, PruneJob, Verification
from engram_gateway.domain.quotas import Usage
from engram_gateway.domain.rate_limits import Policy
from engram_platform.indexes import merge
from engram_platform.outbox import Outbox
from engram_platform.telemetry_store import METRICS_COLLECTION
from engram_platform.tracing import SPANS_COLLECTION
from tests.support.recording_db import RecordingDatabase, judge, public_methods

pytestmark = pytest.mark.unit

T = "ten_a"
AT = datetime(2026, 12, 1, tzinfo=UTC)
NO_SPANS = zlib.compress(bson.encode({"spans": []}))


class Publisher:
    async def publish(self, message: Any, topic: str, **kwargs: Any) -> None:
        return None


class OneLetterBox(DeadLetterBox):
    """The DLQ topic holds one letter of the tenant (no broker)."""

    async def _read_topic(self) -> list[tuple[int, int, bytes]]:
        letter = DeadLetter(
            consumer="memory",
            topic="engram.memories.v1",
            partition=0,
            offset=1,
            tenant_id=T,
            error_type="E",
            error="e",
            attempts=5,
            value_base64="",
            failed_at=AT,
        )
        return [(0, 7, letter.model_dump_json().encode())]


UNINDEXED = {
    **{
        (f"TelemetryReader.{name}", collection): "the local dashboard's capped span and metric "
        "collections (production exports OTLP instead), created capped by every service's "
        "exporter: an index made from here would create them uncapped first"
        for name, collection in (
            ("metric_points", METRICS_COLLECTION),
            ("trace", SPANS_COLLECTION),
            ("traces_naming", SPANS_COLLECTION),
            ("recent_trace_ids", SPANS_COLLECTION),
            ("spans_of", SPANS_COLLECTION),
        )
    },
}
TENANT_FREE = {
    **{
        ("UsageCounters." + name, "tenants"): "a tenant's row: its `_id` is the tenant"
        for name in ("overrides", "set_overrides")
    },
    ("Registry.authenticate", API_KEYS): "a key names its tenant only once it is found",
    **{
        ("TenantLimits." + name, TENANTS): "the tenant's own row, by its `_id` (the tenant id)"
        for name in ("overrides", "set_overrides")
    },
    ("Registry.delete_agent_with", "outbox_markers"): "the outbox's own marker, by its `_id`",
    ("Registry.delete_agent_with", AGENTS): "the outbox moves the events it staged out of the "
    "agent it just wrote, by `_id` (the write itself names the tenant)",
    ("PruneJobs.running", JOBS): "the finalizer finishes every tenant's jobs",
    ("PruneJobs.open", "outbox_markers"): "the outbox's own marker, by its `_id`",
    ("PruneJobs.open", JOBS): "the outbox moves the events it staged out of the job it just "
    "wrote, by `_id` (the write itself names the tenant)",
    **{
        (f"TelemetryReader.{name}", collection): "spans name their tenant among `engram_ids`; "
        "a trace is shown only when one of its spans names the caller's tenant, and metric "
        "points hold no tenant data"
        for name, collection in (
            ("metric_points", METRICS_COLLECTION),
            ("trace", SPANS_COLLECTION),
            ("traces_naming", SPANS_COLLECTION),
            ("recent_trace_ids", SPANS_COLLECTION),
            ("spans_of", SPANS_COLLECTION),
        )
    },
}


async def _forget() -> None:
    """Forgetting a key touches no database."""
    Registry(RecordingDatabase()).forget_key("k1")


async def test_gateway_queries_are_indexed_and_scoped() -> None:
    job = PruneJob(
        key=f"{T}:job_1",
        tenant_id=T,
        job_id="job_1",
        kind="records",
        status="running",
        selector_preview={"record_ids": ["r1"]},
        selector_sizes={"record_ids": 1},
        document_id=None,
        conversation_id=None,
        created_at=AT,
        updated_at=AT,
        ack_batches=("b1",),
    )
    row = {k: v for k, v in asdict(job).items() if k != "key"} | {"_id": job.key}
    db = RecordingDatabase(
        {
            JOBS: [row],
            ACKS: [],
            SPANS_COLLECTION: [
                {"trace_id": "tr1", "start": AT, "engram_ids": [T], "packed": NO_SPANS}
            ],
        }
    )
    keys = Registry(db)
    jobs = PruneJobs(db, Outbox(db))
    submissions = Submissions(db)
    claims = EditClaims(db)
    box = OneLetterBox(bootstrap="", topic_prefix="", db=db, publisher=Publisher())
    telemetry = TelemetryReader(db)
    tenant_limits = TenantLimits(db)
    deleted = new_event(AGENT_DELETED, AgentDeleted(agent_id="a1"), tenant_id=T)
    ack = Ack("memory", frozenset({"r1"}), frozenset())
    prune = new_event(
        PRUNE_REQUESTED,
        PruneRequested(prune_job_id="job_1", selector=PruneSelector(record_ids=["r1"])),
        tenant_id=T,
    )
    key_rows = KeyStore(db)
    usage = UsageCounters(db)
    exercise = {
        "KeyStore.list": lambda: key_rows.list(T),
        "KeyStore.get": lambda: key_rows.get(T, "k1"),
        "KeyStore.active_admins": lambda: key_rows.active_admins(T),
        "KeyStore.revoke": lambda: key_rows.revoke(T, "k1", AT),
        "KeyStore.restore": lambda: key_rows.restore(T, "k1", AT),
        "KeyStore.touch": lambda: key_rows.touch(T, "k1", AT),
        "KeyStore.grant": lambda: key_rows.grant(T, "k1", "admin"),
        "UsageCounters.used": lambda: usage.used(T),
        "UsageCounters.add": lambda: usage.add(T, Usage(memories=1)),
        "UsageCounters.overrides": lambda: usage.overrides(T),
        "UsageCounters.set_overrides": lambda: usage.set_overrides(T, {"memories": 1}),
        "Registry.forget_key": _forget,
        "Registry.create_tenant": lambda: keys.create_tenant("acme"),
        "Registry.add_key": lambda: keys.add_key(T),
        "Registry.authenticate": lambda: keys.authenticate(issue_key().plaintext),
        "Registry.create_agent": lambda: keys.create_agent(T, "planner"),
        "Registry.ensure_agent": lambda: keys.ensure_agent(T, "agt_imported", "planner"),
        "Registry.get_agent": lambda: keys.get_agent(T, "a1"),
        "Registry.list_agents": lambda: keys.list_agents(T),
        "Registry.delete_agent_with": lambda: keys.delete_agent_with(
            Outbox(db), T, "a1", [deleted]
        ),
        "PruneJobs.get": lambda: jobs.get(T, "job_1"),
        "PruneJobs.open": lambda: jobs.open(T, "job_1", "records", {"record_ids": ["r1"]}, prune),
        "PruneJobs.selector": lambda: jobs.selector(job),
        "PruneJobs.add_acks": lambda: jobs.add_acks(T, "job_1", [("e1", ack)]),
        "PruneJobs.progress": lambda: jobs.progress(T, job),
        "PruneJobs.recent": lambda: jobs.recent(T),
        "PruneJobs.running": jobs.running,
        "PruneJobs.finish": lambda: jobs.finish(job, Verification(True, {}, [])),
        "Submissions.record": lambda: submissions.record(T, "memory", "m1"),
        "Submissions.record_many": lambda: submissions.record_many(T, "memory", [("m1", {})]),
        "Submissions.get": lambda: submissions.get(T, "memory", "m1"),
        "Submissions.release": lambda: submissions.release(T, "memory", "m1"),
        "Submissions.held": lambda: submissions.held(T, [("memory", "m1"), ("document", "d1")]),
        "EditClaims.claim": lambda: claims.claim(T, "m1", "m2", "a1"),
        "EditClaims.holder": lambda: claims.holder(T, "m1"),
        "EditClaims.take_over": lambda: claims.take_over(T, "m1", "m2", "m3"),
        "EditClaims.release": lambda: claims.release(T, "m1", "m3"),
        "DeadLetterBox.read": lambda: box.read(T),
        "DeadLetterBox.replay": lambda: box.replay(T, {"0-7"}),
        "TelemetryReader.metric_points": lambda: telemetry.metric_points(timedelta(hours=1)),
        "TelemetryReader.trace": lambda: telemetry.trace(T, "tr1"),
        "TelemetryReader.traces_naming": lambda: telemetry.traces_naming(T, "m1"),
        "TelemetryReader.recent_trace_ids": lambda: telemetry.recent_trace_ids(T),
        "TelemetryReader.spans_of": lambda: telemetry.spans_of(["tr1"]),
        "TenantLimits.overrides": lambda: tenant_limits.overrides(T),
        "TenantLimits.set_overrides": lambda: tenant_limits.set_overrides(
            T, {"write": Policy(rate=1.0, burst=5)}
        ),
    }
    await db.run(exercise)
    declared = merge(registry.INDEXES, prune_jobs.INDEXES)
    verdict = judge(db.calls, declared, tenant_id=T, unindexed=UNINDEXED, tenant_free=TENANT_FREE)
    assert not verdict.report(), verdict.report()
    stores = (
        Registry,
        KeyStore,
        UsageCounters,
        PruneJobs,
        Submissions,
        EditClaims,
        DeadLetterBox,
        TelemetryReader,
        TenantLimits,
    )
    assert public_methods(*stores) == set(exercise)
