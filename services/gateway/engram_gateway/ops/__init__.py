"""The ops dashboard's parts: session, telemetry reads, DLQ replay, pure view models."""
