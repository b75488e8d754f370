"""What each tool tells the agent: when to use it, what to pass, and what the answer means."""

INSTRUCTIONS = (
    "Engram is long-term memory and knowledge for agents. Memories belong to an agent: "
    "agent_list shows yours and agent_create registers one. Write what is worth remembering with "
    "memory_write and get it back with memory_recall (by meaning and exact words) or memory_list "
    "(in order); memory_update corrects it (memory_history shows its versions) and "
    "memory_forget withdraws it. Knowledge comes from documents (document_submit): "
    "search it with knowledge_search, read an entity with knowledge_entity, walk what it is "
    "related to with knowledge_relations and knowledge_path, and check "
    "contradictions_list when sources disagree. Every call runs with your own Engram API key and "
    "sees only your tenant's data. A failed call is a tool error whose text is the problem+json "
    "the gateway answered (`type`, `status`, `detail`, and `errors` naming each invalid field)."
)

AGENT_CREATE = (
    "Register a new agent under your key and get its `agent_id`, which memory_write, "
    "memory_recall, memory_list and memory_forget take. Call it once per agent you run, not once "
    "per session: an agent's memories stay with its id, so reuse the id agent_list shows for an "
    "agent you already have. `name` is an optional label (at most 200 characters). Answers "
    "`agent_id`, `name` and `created_at`."
)

AGENT_LIST = (
    "List the agents registered under your key, each with `agent_id`, `name` and `created_at`, "
    "so you can pick the agent whose memories to write or recall instead of registering another. "
    "Answers `agents`: an empty list means none is registered yet (use agent_create)."
)

MEMORY_WRITE = (
    "Store one memory for an agent: a fact, preference, decision or outcome worth recalling in a "
    "later turn or session. `agent_id` must be an agent registered under your key. Scope it with "
    "`user_id` (whom it is about) and/or `session_id`; add `metadata` (flat KEY: scalar) to filter "
    "on later. Answers `memory_id` and `status: pending`; it becomes recallable once `active`, "
    "usually within seconds (memory_list with status=active shows it). Content that a live memory "
    "in the same scope already holds is not stored twice: the answer says `deduplicated: true` "
    "with that memory's id (`allow_duplicate: true` stores it anyway). To replace an outdated "
    "memory, pass its id as `supersedes`. Reuse one `idempotency_key` when retrying the same write. "
    "For something true only for a while, give `ttl_seconds` (or `expires_at`, not both): at that "
    "time it leaves recall and listings (status `expired`)."
)

MEMORY_RECALL = (
    "Find an agent's memories relevant to a question, best first. `mode`: `hybrid` (default: "
    "meaning and exact words together), `dense` (meaning only) or `lexical` (shared words and "
    "identifiers only, such as order numbers or emails). Narrow it with `filter`: "
    '{"user_id", "session_id", "type", "metadata": {KEY: VALUE or {"eq"|"in"|"gte"|"lte"|"exists": '
    "VALUE}}}. Hits below the relevance floor are dropped (`dropped_below_floor` counts them; "
    "`min_score: 0` keeps them), so `results: []` means nothing relevant is stored: for the "
    "latest memories use memory_list with order=recent instead. Each hit has memory_id, content, "
    "score, scores, type, metadata, user_id, session_id and created_at."
)

MEMORY_LIST = (
    "List memories one page at a time in a stable order: `oldest` first (default) or `recent`. "
    "Without `agent_id` it lists across all your agents. Narrow with `type`, `status` "
    "(pending|active|superseded|withdrawn|rejected), `user_id`, `session_id`, `search` (a "
    "literal, case-insensitive substring of the content) and `filter` (as memory_recall takes "
    "it). Pass the answer's `next_cursor` as `cursor` for the next page; there is none after the "
    "last page."
)

MEMORY_UPDATE = (
    "Correct a memory: writes a new version with `content` and/or `metadata` (which replaces "
    "the whole metadata object; omitted, the old content or metadata is kept) that supersedes "
    "`memory_id`. The old version stays readable as `superseded` (memory_history lists it) and "
    "leaves recall once the new one is active. Give a short `reason` (at most 500 characters): "
    "it is kept with your key's id in the history. Answers the new `memory_id` and `status: "
    "pending`. A 409 problem means `memory_id` is no longer the live version: edit the one its "
    "`superseded_by` names instead. The new version keeps the old expiry unless you give "
    "`ttl_seconds` or `expires_at` (an edit may change only that)."
)

MEMORY_HISTORY = (
    "List every version of a memory, oldest first, from any of its ids: each with `memory_id`, "
    "`status` (the live one `active`, replaced ones `superseded`), `content`, `metadata`, "
    "`created_at`, `author` (the API key id and role that wrote it) and `edit_reason` (why it "
    "was edited). Use it to see how and why a memory changed before correcting it again."
)

MEMORY_FORGET = (
    "Withdraw memories so recall and listings of active memories no longer return them (this "
    "cannot be undone). Give exactly one of: `memory_id` (that one memory), `user_id` and/or "
    "`session_id` (every memory of the agent in that scope), or `all_memories: true` (every "
    "memory of the agent). Answers the withdrawn memory, or `withdrawn`: how many were."
)

KNOWLEDGE_SEARCH = (
    "Search the knowledge Engram built from submitted documents and imported records: facts "
    "(an entity's attribute and value, with status, `contested` flag and supporting records), "
    "sections of entity articles, and passages of prose documents (Markdown, text, PDF, Word, "
    "HTML). A fact or section names its `entity_id`: read the whole entity with "
    "knowledge_entity. A passage (`kind: passage`) carries its citation: `document_id`, "
    "`version`, `name`, `heading_path`, `page`/`page_end` (PDF) and `span` in the extracted "
    "text, with the passage's `text`; quote it with that citation. `kinds` keeps only the kinds "
    'named (e.g. ["passage"]). `mode` works as in memory_recall. `expand` 1 or 2 follows each '
    "hit with the facts of related entities (marked `expanded`, nearest first). A contested "
    "fact means "
    "sources disagree: see contradictions_list before relying on it. `results: []` means "
    "nothing relevant is known."
)

KNOWLEDGE_ENTITY = (
    "Read one entity by id (as knowledge_search or a record names it, e.g. `carrier:c1`): its "
    "Markdown article and its facts with status, contested flag and support. "
    "`include_withdrawn: true` adds facts no source asserts any more. An id your tenant does not "
    "have is a 404 problem."
)

KNOWLEDGE_RELATIONS = (
    "List an entity's relations (e.g. a shipment `carried_by` a carrier, declared as reference "
    "fields of its record type): `direction` out (the entity is the subject), in, or both; "
    "`depth` 1-3 walks on through related entities, nearest first; `predicate` keeps one kind. "
    "Each relation names `from`, `predicate`, `to`, its `direction`, `depth`, `status` (a "
    "`contested` one has a contradiction: two sources name different targets) and its support; "
    "`resolved: false` means no source describes the target entity yet. Pass `next_cursor` back "
    "as `cursor` for more. An entity your tenant does not have is a 404 problem."
)

KNOWLEDGE_PATH = (
    "Find how two entities are connected: the shortest chains of relations (walked either way) "
    "from `from_entity` to `to_entity`, up to `max_depth` hops (1-4). Each path lists its "
    "relations in order with their direction; `paths: []` means none within the bound. Use it "
    "to answer questions such as which carriers move a supplier's goods."
)

CONTRADICTIONS_LIST = (
    "List contradictions: single-valued attributes on which sources disagree (say, two cities "
    "for one carrier), each with the competing claims and their support. `status`: `open` "
    "(unresolved) or `resolved`; all when omitted."
)

KNOWLEDGE_EDIT = (
    "Assert or withdraw one value of an entity's attribute as a curator (your key needs the "
    "`curator` or `admin` role, else a 403 problem). The edit becomes a record of source `human` "
    "carrying your key id, the time and `reason`; your next edit of the same attribute replaces "
    "it. `assert` needs `value`; `withdraw` withdraws `value` (every value when omitted). A "
    "withdrawn value that documents still assert is contested (see contradictions_list), not "
    "removed. Answers `status: accepted`; knowledge_entity shows the edit within seconds."
)

DOCUMENT_SUBMIT = (
    "Submit a text document to Engram's knowledge: CSV, TSV, JSON, NDJSON, Markdown tables or "
    "`key: value` text. `name` is its file name; its extension picks the extractor unless "
    "`mime` (e.g. text/csv) is given. Submitting the same name again with new content makes a new "
    "version, which replaces what the previous version asserted. Answers `document_id` and "
    "`status: pending`; its rows become records, facts and entities within seconds, then "
    "knowledge_search and knowledge_entity find them."
)
