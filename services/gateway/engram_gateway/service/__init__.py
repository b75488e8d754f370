"""The gateway's use cases, one module per concern."""
