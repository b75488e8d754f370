"""Settings both Qdrant adapters share."""

DEFAULT_KEYWORD_INDEXES = ("tenant_id", "agent_id", "status", "type")
"""Payload fields given keyword indexes, since store queries filter on them. An unindexed
condition beside indexed ones made the engine's filtered search ~5x slower (p50 5.4 ms, p95 35 ms
at 100k points with `status` unindexed; 1.1 ms and 1.3 ms for tenant and agent alone)."""
TENANT_KEY = "tenant_id"
"""The keyword index marked as the tenant, so the engine groups a tenant's points together."""
UPSERT_CHUNK = 512
"""Points per engine write, to bound the size of one request."""
LEXICAL_VECTOR = "lexical"
"""The name of the sparse vector a lexical collection holds beside its unnamed dense vector."""
