"""The dead-letter record: the failed message, who failed, why, and how often."""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field


class DeadLetter(BaseModel):
    """What lands on engram.dlq.v1; `value_base64` is the original message, untouched."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    consumer: str
    topic: str
    partition: int
    offset: int
    key: str | None = None
    event_id: str | None = None
    event_type: str | None = None
    tenant_id: str | None = None
    error_type: str
    error: str = Field(max_length=4000)
    reason: str | None = Field(default=None, max_length=400)
    """Why, without the message's content (`error` may quote it): what a tenant is shown."""
    attempts: int = Field(ge=1)
    value_base64: str
    headers: dict[str, str] = Field(default_factory=dict)
    failed_at: datetime

    def item_reason(self) -> str:
        """What the item a dead-lettered input named says of it: dead-lettered, and why."""
        return f"dead_lettered: {self.reason or self.error_type}"
