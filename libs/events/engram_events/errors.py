"""Typed decoding errors: each one means 'send this message to the DLQ', never 'crash'."""


class PoisonMessage(Exception):
    """A message that can never be processed as it is; consumers dead-letter it."""

    reason = "poison"


class MalformedEvent(PoisonMessage):
    """The bytes are not a valid envelope or the payload fails validation."""

    reason = "malformed"


class UnknownEventType(PoisonMessage):
    """The envelope names an event type this build does not know."""

    reason = "unknown_event_type"


class UnsupportedSchemaVersion(PoisonMessage):
    """The event type is known but not at this schema version."""

    reason = "unsupported_schema_version"
