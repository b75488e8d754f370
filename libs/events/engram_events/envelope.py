"""The one envelope every event travels in."""

from datetime import datetime
from typing import Generic, TypeVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from engram_events.ids import Id

P = TypeVar("P", bound=BaseModel)


class Envelope(BaseModel, Generic[P]):
    """Event metadata plus one typed payload; `event_id` is the idempotency key."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    event_id: UUID
    event_type: str = Field(min_length=1, max_length=100)
    schema_version: int = Field(ge=1)
    occurred_at: datetime
    tenant_id: Id
    causation_id: UUID | None = None
    correlation_id: UUID
    payload: P


class RawEnvelope(BaseModel):
    """The envelope before its payload is typed: what decoding checks first."""

    model_config = ConfigDict(extra="ignore")

    event_id: UUID
    event_type: str = Field(min_length=1, max_length=100)
    schema_version: int = Field(ge=1)
    occurred_at: datetime
    tenant_id: Id
    causation_id: UUID | None = None
    correlation_id: UUID
    payload: dict[str, object]
