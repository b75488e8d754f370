"""What the gateway's use cases need from the outside world, as Protocols."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

import httpx

from engram_events import Envelope
from engram_gateway.domain.access import StoredKey
from engram_gateway.domain.dead_letters import Letter
from engram_gateway.domain.keys import IssuedKey
from engram_gateway.domain.model import Agent, Caller
from engram_gateway.domain.prune import Ack, JobKind, Progress, PruneJob, Verification
from engram_gateway.domain.quotas import Usage
from engram_gateway.domain.rate_limits import Policy
from engram_gateway.domain.submissions import Submission
from engram_platform.audit import AuditEntry, AuditQuery


class EventSink(Protocol):
    """Kafka, for events published while the client waits (acks=all)."""

    async def publish(self, event: Envelope[Any]) -> None: ...

    async def publish_many(self, events: Sequence[Envelope[Any]]) -> None: ...


class SubmissionLog(Protocol):
    """The writes the gateway accepted, per tenant, kind and id."""

    async def record(
        self, tenant_id: str, kind: str, item_id: str, **fields: Any
    ) -> Submission | None: ...

    async def record_many(
        self, tenant_id: str, kind: str, items: list[tuple[str, dict[str, Any]]]
    ) -> int: ...

    async def get(self, tenant_id: str, kind: str, item_id: str) -> Submission | None: ...

    async def release(self, tenant_id: str, kind: str, item_id: str) -> Submission | None: ...


class SubmissionReads(Protocol):
    """Which writes the gateway accepted, for ids their owners may not hold yet."""

    async def held(
        self, tenant_id: str, items: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Submission]: ...


class EditClaimStore(Protocol):
    """Which edit replaces each edited memory version (`adapters.edit_claims.EditClaims`)."""

    async def claim(self, tenant_id: str, memory_id: str, newer_id: str, agent_id: str) -> bool: ...

    async def holder(self, tenant_id: str, memory_id: str) -> str | None: ...

    async def take_over(
        self, tenant_id: str, memory_id: str, loser_id: str, newer_id: str
    ) -> bool: ...

    async def release(self, tenant_id: str, memory_id: str, newer_id: str) -> None: ...


class OwningServices(Protocol):
    """The internal HTTP APIs of the services that own records, facts, memories and documents."""

    async def request(
        self, service: str, method: str, path: str, *, tenant_id: str, **kwargs: Any
    ) -> httpx.Response: ...


class OwnerReads(Protocol):
    """Read-only POSTs of JSON bytes to an owning service over a lean kept-alive client (a
    write's duplicate lookup costs the gateway a third of what the pooled client did)."""

    async def read_post(
        self, service: str, path: str, body: bytes, *, tenant_id: str
    ) -> tuple[int, bytes]: ...


class PruneJobStore(Protocol):
    """Prune jobs, their selectors and their acknowledgements, per tenant."""

    async def open(
        self,
        tenant_id: str,
        job_id: str,
        kind: JobKind,
        selector: dict[str, Any],
        event: Envelope[Any],
    ) -> None: ...

    async def get(self, tenant_id: str, job_id: str) -> PruneJob | None: ...

    async def selector(self, job: PruneJob) -> dict[str, Any]: ...

    async def add_acks(
        self, tenant_id: str, job_id: str, acks: Sequence[tuple[str, Ack]]
    ) -> None: ...

    async def progress(self, tenant_id: str, job: PruneJob) -> Progress: ...

    async def recent(self, tenant_id: str) -> list[str]: ...

    async def running(self) -> list[PruneJob]: ...

    async def finish(self, job: PruneJob, verification: Verification) -> None: ...


class KeyRows(Protocol):
    """A tenant's stored API keys (`adapters.keys.KeyStore`)."""

    async def list(self, tenant_id: str) -> list[StoredKey]: ...

    async def get(self, tenant_id: str, key_id: str) -> StoredKey | None: ...

    async def active_admins(self, tenant_id: str) -> set[str]: ...

    async def revoke(self, tenant_id: str, key_id: str, at: datetime) -> bool: ...

    async def restore(self, tenant_id: str, key_id: str, at: datetime) -> None: ...

    async def touch(self, tenant_id: str, key_id: str, at: datetime) -> None: ...


class KeyIssuer(Protocol):
    """Where keys are issued and authenticated (`adapters.registry.Registry`)."""

    async def add_key(
        self, tenant_id: str, roles: tuple[str, ...] = (), *, name: str | None = None
    ) -> IssuedKey: ...

    def forget_key(self, key_id: str) -> None: ...


class UsageStore(Protocol):
    """Per-tenant usage counters and limits (`adapters.usage.UsageCounters`)."""

    async def used(self, tenant_id: str) -> Usage: ...

    async def add(self, tenant_id: str, amount: Usage) -> None: ...

    async def overrides(self, tenant_id: str) -> dict[str, int]: ...


class AgentDirectory(Protocol):
    """The registry's agents, as an import creates them under ids it chooses."""

    async def ensure_agent(self, tenant_id: str, agent_id: str, name: str | None) -> str: ...


class AuditStore(Protocol):
    """The gateway's audit entries (`engram_platform.audit.AuditLog`)."""

    async def record(self, entries: Sequence[AuditEntry]) -> None: ...

    async def page(self, tenant_id: str, query: AuditQuery) -> list[AuditEntry]: ...


class Owners(OwningServices, OwnerReads, Protocol):
    """The owning services' internal APIs, pooled and lean."""


class AgentRegistry(Protocol):
    """Who a presented key is, and a tenant's agents."""

    async def authenticate(self, presented: str) -> Caller | None: ...

    async def create_agent(self, tenant_id: str, name: str | None) -> Agent: ...

    async def get_agent(self, tenant_id: str, agent_id: str) -> Agent | None: ...

    async def list_agents(self, tenant_id: str) -> list[Agent]: ...

    async def delete_agent_with(
        self, outbox: Any, tenant_id: str, agent_id: str, events: list[Any]
    ) -> None: ...


class DeadLetters(Protocol):
    """A tenant's dead letters, and their replay to the topics they came from."""

    async def read(self, tenant_id: str) -> list[Letter]: ...

    async def replay(self, tenant_id: str, letter_ids: set[str]) -> dict[str, str]: ...


class TelemetryReads(Protocol):
    """The stored metrics and traces the ops pages show (ids, counts and hashes only)."""

    async def metric_points(self, window: timedelta) -> list[dict[str, Any]]: ...

    async def trace(self, tenant_id: str, trace_id: str) -> list[dict[str, Any]]: ...

    async def traces_naming(self, tenant_id: str, engram_id: str, limit: int = 20) -> list[str]: ...

    async def recent_trace_ids(self, tenant_id: str, limit: int = 15) -> list[str]: ...

    async def spans_of(self, trace_ids: list[str]) -> dict[str, list[dict[str, Any]]]: ...


class TenantLimitReads(Protocol):
    """A tenant's own rate-limit policies, over the defaults."""

    async def overrides(self, tenant_id: str) -> Mapping[str, Policy]: ...
