"""`PUT`/`DELETE /v1/knowledge/entities/{id}/facts/{attribute}`: a curator asserts or withdraws
a value. Each edit becomes a record of source `human` (one per entity, attribute and key), so it
supports or contests values like any source, shows in the article with its provenance, survives
re-extraction of documents and is pruned like any record. A withdrawn value that other records
still assert opens a contradiction."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from engram_events.payloads.records import FactEditRequested, ImportValue, Reason
from engram_events.values import Text
from engram_gateway.api.auth import CallerDep
from engram_gateway.api.dependencies import Deps, GatewayDeps
from engram_gateway.api.records import ID_PATTERN
from engram_gateway.domain.model import Caller
from engram_platform.audit import Action

router = APIRouter(prefix="/v1/knowledge", tags=["knowledge"])
EntityId = Annotated[str, Path(min_length=1, max_length=256, pattern=ID_PATTERN)]
Attribute = Annotated[Text, Path(min_length=1, max_length=200)]
"""Checked as the event's attribute name is, so a name it could not carry is a 422 here."""


class _Known(BaseModel):
    """Names every unknown field in one message, so a typo is not a silent no-op."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(cls.model_fields))
            if unknown:
                raise ValueError(f"unknown fields: {', '.join(unknown)}")
        return data


class AssertFact(_Known):
    """The value the curator asserts, and why."""

    value: ImportValue = Field(description="a string, number or boolean (not null)")
    reason: Reason

    @model_validator(mode="after")
    def _asserts_something(self) -> AssertFact:
        """Null asserts nothing; withdraw a value with DELETE instead."""
        if self.value is None:
            raise ValueError("value may not be null; withdraw a value with DELETE")
        return self


class WithdrawFact(_Known):
    """Why the curator withdraws the value (or, without `value`, every value of the attribute)."""

    reason: Reason
    value: ImportValue = None


def accepted(edit: FactEditRequested) -> JSONResponse:
    """The 202: what was queued, by which key and when, and where the entity reads."""
    body = {
        "status": "accepted",
        "entity_id": edit.entity_id,
        "attribute": edit.attribute,
        "value": edit.value,
        "action": edit.edit.action,
        "key_id": edit.edit.key_id,
        "reason": edit.edit.reason,
        "at": edit.edit.at.isoformat(),
        "entity_url": f"/v1/knowledge/entities/{quote(edit.entity_id, safe=':')}",
    }
    return JSONResponse(body, status_code=202)


async def audited(deps: GatewayDeps, caller: Caller, edit: FactEditRequested) -> None:
    """The edit's audit entry: the entity, the attribute and the reason's hash, not the value."""
    action: Action = "fact.asserted" if edit.edit.action == "assert" else "fact.withdrawn"
    target = {"entity_id": edit.entity_id, "attribute": edit.attribute}
    await deps.audit.record(caller, action, target, reason=edit.edit.reason)


@router.put("/entities/{entity_id:path}/facts/{attribute}", status_code=202)
async def assert_fact(
    entity_id: EntityId,
    attribute: Attribute,
    body: AssertFact,
    deps: Deps,
    caller: CallerDep,
) -> JSONResponse:
    """Assert a value as a `human` record (acks=all, then 202); the key's next edit of this
    attribute replaces it. 403 without the `curator` or `admin` role."""
    edit = await deps.curation.edit(caller, entity_id, attribute, "assert", body.reason, body.value)
    await audited(deps, caller, edit)
    return accepted(edit)


@router.delete("/entities/{entity_id:path}/facts/{attribute}", status_code=202)
async def withdraw_fact(
    entity_id: EntityId,
    attribute: Attribute,
    body: WithdrawFact,
    deps: Deps,
    caller: CallerDep,
) -> JSONResponse:
    """Withdraw a value (every value without `value`) as a `human` record: a value no other
    record asserts is withdrawn, one still asserted is contested (a contradiction opens)."""
    edit = await deps.curation.edit(
        caller, entity_id, attribute, "withdraw", body.reason, body.value
    )
    await audited(deps, caller, edit)
    return accepted(edit)
