"""Every public endpoint as a `Call`: built once per logical request, run by the sync or async client.

`retry_safe` marks what may be sent again after a timeout, a 429 or a 503:
reads; POSTs that only read (recall, knowledge search); DELETEs; memory writes
and record imports (they carry an idempotency key, generated here once and
reused on every retry); document uploads (the gateway keys them by name and
content hash, so a repeat is the same version); DLQ replays (each letter is
replayed once; a repeat answers `already_replayed`); key revocations; an agent's
retention PUT (a repeat sets the same rules). A record type's PUT or DELETE makes a
new version and is not repeated. Creating an
agent, starting a prune, deleting a document, resolving a contradiction, and
issuing or rotating a key are not repeated except when the connection failed
before the request was sent.
"""

from engram_client.calls.audit import list_audit
from engram_client.calls.base import Call, Params, new_idempotency_key, segment
from engram_client.calls.keys import create_key, list_keys, revoke_key, rotate_key
from engram_client.calls.memories import (
    clear_memories,
    converse,
    count_memories,
    create_agent,
    delete_agent,
    delete_conversation,
    delete_memory,
    get_agent,
    get_conversation,
    get_memory,
    get_retention,
    list_agents,
    list_memories,
    memory_history,
    recall,
    set_retention,
    update_memory,
    write_memories,
    write_memory,
)
from engram_client.calls.ops import (
    get_prune_job,
    health,
    lineage,
    list_dead_letters,
    ready,
    reindex_progress,
    replay_dead_letter,
    replay_dead_letters,
    start_prune,
    start_reindex,
    tenant_dead_letters,
)
from engram_client.calls.sources import (
    assert_fact,
    delete_document,
    entity_relations,
    find_paths,
    get_document,
    get_entity,
    get_import,
    get_record,
    import_records,
    list_contradictions,
    list_entities,
    list_passages,
    list_records,
    resolve_contradiction,
    search_knowledge,
    upload_document,
    withdraw_fact,
)
from engram_client.calls.types import delete_type, get_type, list_types, put_type, type_versions

__all__ = [
    "Call",
    "Params",
    "assert_fact",
    "clear_memories",
    "converse",
    "count_memories",
    "create_agent",
    "create_key",
    "delete_agent",
    "delete_conversation",
    "delete_document",
    "delete_memory",
    "delete_type",
    "entity_relations",
    "find_paths",
    "get_agent",
    "get_conversation",
    "get_document",
    "get_entity",
    "get_import",
    "get_memory",
    "get_prune_job",
    "get_record",
    "get_retention",
    "get_type",
    "health",
    "import_records",
    "lineage",
    "list_agents",
    "list_audit",
    "list_contradictions",
    "list_dead_letters",
    "list_entities",
    "list_keys",
    "list_memories",
    "list_passages",
    "list_records",
    "list_types",
    "memory_history",
    "new_idempotency_key",
    "put_type",
    "ready",
    "recall",
    "reindex_progress",
    "replay_dead_letter",
    "replay_dead_letters",
    "resolve_contradiction",
    "revoke_key",
    "rotate_key",
    "search_knowledge",
    "segment",
    "set_retention",
    "start_prune",
    "start_reindex",
    "tenant_dead_letters",
    "type_versions",
    "update_memory",
    "upload_document",
    "withdraw_fact",
    "write_memories",
    "write_memory",
]
