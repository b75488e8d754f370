"""Lineage across the owning services: what a document or record derives, and what a fact or
memory derives from, one id at a time."""

from __future__ import annotations

from typing import Any

from engram_gateway.ports import OwningServices
from engram_platform.problems import Problem

MAX_RECORDS = 10_000
"""A document's lineage lists at most this many records."""


class Lineage:
    """Follows lineage edges from one id through the services that own each kind of item."""

    def __init__(self, owners: OwningServices) -> None:
        self.owners = owners

    async def follow(self, tenant: str, item_id: str) -> dict[str, Any]:
        """The item and its edges; 422 for an id of no known kind, 404 when no owning service
        knows it for this tenant."""
        if item_id.startswith("doc_"):
            found = await _document(self.owners, tenant, item_id)
        elif item_id.startswith("rec_"):
            found = await _record(self.owners, tenant, item_id)
        elif item_id.startswith("mem_"):
            found = await _memory(self.owners, tenant, item_id)
        elif item_id.count(":") >= 3:
            found = await _fact(self.owners, tenant, item_id)
        else:
            raise Problem(422, "unknown-id-kind", "give a document, record, fact or memory id")
        if found is None:
            raise Problem(404, detail="no such item")
        return found


async def _json(
    internal: OwningServices, service: str, method: str, path: str, tenant: str, **kw: Any
) -> dict[str, Any] | None:
    """An owning service's answer, None for 404; anything else is 503 naming the service."""
    response = await internal.request(service, method, path, tenant_id=tenant, **kw)
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise Problem(503, "service-unavailable", f"the {service} service could not answer")
    body: dict[str, Any] = response.json()
    return body


async def _downstream(
    internal: OwningServices, tenant: str, record_ids: list[str], extra: list[str]
) -> dict[str, Any]:
    """Facts resting on the records, and memories derived from any of them or their facts."""
    facts_body = await _json(
        internal,
        "enrichment",
        "POST",
        "/internal/v1/lineage/facts",
        tenant,
        json={"records": record_ids},
    )
    facts = (facts_body or {}).get("facts", [])
    sources = [*extra, *record_ids, *(f["fact_id"] for f in facts)]
    memories_body = await _json(
        internal, "memory", "POST", "/internal/v1/lineage/derived", tenant, json={"ids": sources}
    )
    return {"facts": facts, "memories": (memories_body or {}).get("memories", [])}


async def _document(internal: OwningServices, tenant: str, doc_id: str) -> dict[str, Any] | None:
    doc = await _json(internal, "ingest", "GET", f"/internal/v1/documents/{doc_id}", tenant)
    if doc is None:
        return None
    records: list[dict[str, Any]] = []
    cursor: str | None = None
    while len(records) < MAX_RECORDS:
        params = {"document_id": doc_id, "limit": "500", **({"cursor": cursor} if cursor else {})}
        page = await _json(
            internal, "extraction", "GET", "/internal/v1/records", tenant, params=params
        )
        records.extend(
            {
                "record_id": r["record_id"],
                "entity_id": r.get("entity_id"),
                "status": r.get("status"),
            }
            for r in (page or {}).get("records", [])
        )
        cursor = (page or {}).get("next_cursor")
        if not cursor:
            break
    derived = await _downstream(internal, tenant, [r["record_id"] for r in records], [doc_id])
    return {
        "id": doc_id,
        "kind": "document",
        "status": doc.get("status"),
        "derives": {"records": records, **derived},
    }


async def _record(internal: OwningServices, tenant: str, record_id: str) -> dict[str, Any] | None:
    record = await _json(internal, "extraction", "GET", f"/internal/v1/records/{record_id}", tenant)
    if record is None:
        return None
    return {
        "id": record_id,
        "kind": "record",
        "status": record.get("status"),
        "derives_from": {"lineage": record.get("lineage")},
        "derives": await _downstream(internal, tenant, [record_id], []),
    }


async def _memory(internal: OwningServices, tenant: str, memory_id: str) -> dict[str, Any] | None:
    memory = await _json(
        internal, "memory", "GET", f"/internal/v1/lineage/memories/{memory_id}", tenant
    )
    if memory is None:
        return None
    return {
        "id": memory_id,
        "kind": "memory",
        "status": memory.get("status"),
        "agent_id": memory.get("agent_id"),
        "derives_from": {"ids": memory.get("derived_from", [])},
    }


async def _fact(internal: OwningServices, tenant: str, fact_id: str) -> dict[str, Any] | None:
    fact = await _json(
        internal, "enrichment", "GET", f"/internal/v1/lineage/facts/{fact_id}", tenant
    )
    if fact is None:
        return None
    records = []
    for record_id in fact["support"]:
        record = await _json(
            internal, "extraction", "GET", f"/internal/v1/records/{record_id}", tenant
        )
        records.append({"record_id": record_id, "lineage": (record or {}).get("lineage")})
    memories = await _json(
        internal, "memory", "POST", "/internal/v1/lineage/derived", tenant, json={"ids": [fact_id]}
    )
    return {
        "id": fact_id,
        "kind": "fact",
        "status": fact.get("status"),
        "entity_id": fact.get("entity_id"),
        "derives_from": {"records": records},
        "derives": {"memories": (memories or {}).get("memories", [])},
    }
