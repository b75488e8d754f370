"""The base every payload shares."""

from pydantic import BaseModel, ConfigDict


class Payload(BaseModel):
    """Immutable; unknown fields are ignored so optional fields can be added within a version."""

    model_config = ConfigDict(frozen=True, extra="ignore")
