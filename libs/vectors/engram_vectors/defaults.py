"""Settings both Qdrant adapters share."""

DEFAULT_KEYWORD_INDEXES = ("tenant_id", "agent_id")
"""Payload fields given keyword indexes, since every store query filters on them."""
TENANT_KEY = "tenant_id"
"""The keyword index marked as the tenant, so the engine groups a tenant's points together."""
UPSERT_CHUNK = 512
"""Points per engine write, to bound the size of one request."""
