"""`EngramClient`: the blocking client, one method per public endpoint."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, TypeVar

import httpx

from engram_client import calls, models, transfer
from engram_client.calls import Call
from engram_client.errors import NotFound, error_from_response
from engram_client.retry import RetryPolicy
from engram_client.settings import resolve_connection
from engram_client.transport import (
    USER_AGENT,
    read_answer,
    request_args,
    retry_delay_after_exception,
    retry_delay_after_status,
)
from engram_client.uploads import guess_mime
from engram_client.waiting import (
    DOCUMENT_FINAL,
    MEMORY_PENDING,
    PRUNE_FINAL,
    Deadline,
    Progress,
)

T = TypeVar("T")
_UNSET: Any = object()


class EngramClient:
    """Typed access to the gateway; retries what is safe to retry (see `engram_client.calls`)."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        env_file: Path | str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.connection = resolve_connection(base_url, api_key, env_file=env_file)
        self.retry = retry or RetryPolicy()
        self._http = httpx.Client(
            base_url=self.connection.base_url,
            timeout=timeout,
            headers={"User-Agent": USER_AGENT},
            transport=transport,
        )

    def __enter__(self) -> EngramClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release pooled connections."""
        self._http.close()

    def run(self, call: Call[T]) -> T:
        """Send one call, retrying with backoff when the call is safe to repeat."""
        attempt = 1
        while True:
            try:
                response = self._http.request(**request_args(call, self.connection.api_key))
            except httpx.TransportError as exc:
                time.sleep(retry_delay_after_exception(call, exc, attempt, self.retry))
                attempt += 1
                continue
            delay = retry_delay_after_status(call, response, attempt, self.retry)
            if delay is None:
                return read_answer(call, response)
            time.sleep(delay)
            attempt += 1

    def _poll(
        self,
        fetch: Callable[[], T],
        finished: Callable[[T], bool],
        what: str,
        deadline: Deadline,
        on_progress: Progress | None,
    ) -> T:
        """Fetch until `finished`, reporting each state; WaitTimeout once the deadline passes."""
        while True:
            state = fetch()
            if on_progress:
                on_progress(state)
            if finished(state):
                return state
            time.sleep(deadline.next_sleep(what))

    # Agents

    def create_agent(self, name: str | None = None) -> models.Agent:
        """Register an agent."""
        return self.run(calls.create_agent(name))

    def list_agents(self) -> list[models.Agent]:
        """The caller's agents."""
        return self.run(calls.list_agents())

    def get_agent(self, agent_id: str) -> models.Agent:
        """One agent."""
        return self.run(calls.get_agent(agent_id))

    def delete_agent(self, agent_id: str) -> None:
        """Delete an agent."""
        self.run(calls.delete_agent(agent_id))

    # Memories

    def write_memory(
        self,
        agent_id: str,
        content: str,
        *,
        type: str = "conversation",
        metadata: Mapping[str, Any] | None = None,
        derived_from: Sequence[str] | None = None,
        supersedes: str | None = None,
        idempotency_key: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        allow_duplicate: bool = False,
        ttl_seconds: int | None = None,
        expires_at: datetime | None = None,
    ) -> models.MemoryAccepted:
        """Store a memory (202, `pending`), scoped to a user and/or session when given; a live
        memory in that scope with the same content is answered instead (`deduplicated`) unless
        `allow_duplicate`. With `ttl_seconds` or `expires_at` it leaves recall and listings at
        that time (status `expired`). One idempotency key covers every retry."""
        return self.run(
            calls.write_memory(
                agent_id,
                content,
                type=type,
                metadata=metadata,
                derived_from=derived_from,
                supersedes=supersedes,
                idempotency_key=idempotency_key,
                user_id=user_id,
                session_id=session_id,
                allow_duplicate=allow_duplicate,
                ttl_seconds=ttl_seconds,
                expires_at=expires_at,
            )
        )

    def write_memories(
        self, agent_id: str, memories: Sequence[Mapping[str, Any]]
    ) -> list[models.MemoryAccepted]:
        """Store up to 100 memories in one request (each as `write_memory`'s fields), answered
        in order; any of them may come back `deduplicated`."""
        return self.run(calls.write_memories(agent_id, memories))

    def converse(
        self,
        agent_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> models.ConversationAccepted:
        """Hand over a conversation (`[{"role", "content", "name"?, "at"?}]`) to be turned
        into memories (202, `pending`); one idempotency key covers every retry."""
        return self.run(
            calls.converse(
                agent_id,
                messages,
                user_id=user_id,
                session_id=session_id,
                metadata=metadata,
                idempotency_key=idempotency_key,
            )
        )

    def get_conversation(self, agent_id: str, conversation_id: str) -> models.Conversation:
        """What became of each message and each extracted fact."""
        return self.run(calls.get_conversation(agent_id, conversation_id))

    def delete_conversation(
        self, agent_id: str, conversation_id: str
    ) -> models.ConversationDeleting:
        """Delete a conversation's texts and withdraw every memory derived from it; returns
        the prune job (follow it with `wait_for_prune_job`)."""
        return self.run(calls.delete_conversation(agent_id, conversation_id))

    def wait_for_conversation(
        self,
        agent_id: str,
        conversation_id: str,
        timeout: float = 120.0,
        *,
        interval: float = 0.5,
        on_progress: Progress | None = None,
    ) -> models.Conversation:
        """Poll until the conversation is settled: processed with no memory still pending,
        failed, or deleted."""
        return self._poll(
            lambda: self.get_conversation(agent_id, conversation_id),
            lambda conversation: conversation.settled,
            f"conversation {conversation_id}",
            Deadline(timeout, interval),
            on_progress,
        )

    def get_memory(self, agent_id: str, memory_id: str) -> models.Memory:
        """One memory with its status and provenance."""
        return self.run(calls.get_memory(agent_id, memory_id))

    def update_memory(
        self,
        agent_id: str,
        memory_id: str,
        *,
        content: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        reason: str | None = None,
        ttl_seconds: int | None = None,
        expires_at: datetime | None = None,
    ) -> models.MemoryAccepted:
        """Edit a memory (202, `pending`): a new version superseding this one, with `content`
        and/or `metadata` (replacing the old metadata whole) and/or a new expiry (else the old
        one is kept) and why; `Conflict` (409) when this version is no longer the live one,
        its `superseded_by` naming the newer."""
        return self.run(
            calls.update_memory(
                agent_id,
                memory_id,
                content=content,
                metadata=metadata,
                reason=reason,
                ttl_seconds=ttl_seconds,
                expires_at=expires_at,
            )
        )

    def memory_history(self, agent_id: str, memory_id: str) -> models.MemoryHistory:
        """Every version of the memory's chain, oldest first: who wrote each, when and why."""
        return self.run(calls.memory_history(agent_id, memory_id))

    def get_retention(self, agent_id: str) -> models.Retention:
        """The agent's retention rules and the defaults in force for its other types."""
        return self.run(calls.get_retention(agent_id))

    def set_retention(self, agent_id: str, rules: Sequence[Mapping[str, Any]]) -> models.Retention:
        """Replace the agent's rules (`[{"type", "max_count"?, "max_age_seconds"?}]`, one per
        type; `[]` returns it to the defaults); they apply from its next stored memory on."""
        return self.run(calls.set_retention(agent_id, rules))

    def list_memories(
        self,
        agent_id: str | None = None,
        *,
        search: str | None = None,
        type: str | None = None,
        status: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        filter: Mapping[str, Any] | None = None,
        cursor: str | None = None,
        limit: int | None = None,
        order: str | None = None,
    ) -> models.MemoryPage:
        """One page of an agent's memories (across all the caller's agents when agent_id=None),
        `oldest` first unless `order="recent"`; pass its `next_cursor` as `cursor` for the next."""
        return self.run(
            calls.list_memories(
                agent_id,
                search=search,
                type=type,
                status=status,
                user_id=user_id,
                session_id=session_id,
                filter=filter,
                cursor=cursor,
                limit=limit,
                order=order,
            )
        )

    def iter_memories(
        self,
        agent_id: str | None = None,
        *,
        search: str | None = None,
        type: str | None = None,
        status: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        filter: Mapping[str, Any] | None = None,
        order: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[models.Memory]:
        """Every matching memory, following `next_cursor` as the iteration needs the next page."""
        cursor: str | None = None
        while True:
            page = self.list_memories(
                agent_id,
                search=search,
                type=type,
                status=status,
                user_id=user_id,
                session_id=session_id,
                filter=filter,
                cursor=cursor,
                limit=page_size,
                order=order,
            )
            yield from page.memories
            if not page.next_cursor or not page.memories:
                return
            cursor = page.next_cursor

    def count_memories(
        self,
        agent_id: str,
        *,
        search: str | None = None,
        type: str | None = None,
        status: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        filter: Mapping[str, Any] | None = None,
    ) -> models.MemoryCount:
        """How many of an agent's memories `list_memories` would walk, by status and by type."""
        return self.run(
            calls.count_memories(
                agent_id,
                search=search,
                type=type,
                status=status,
                user_id=user_id,
                session_id=session_id,
                filter=filter,
            )
        )

    def delete_memory(self, agent_id: str, memory_id: str) -> models.Memory:
        """Withdraw one memory."""
        return self.run(calls.delete_memory(agent_id, memory_id))

    def clear_memories(
        self, agent_id: str, *, user_id: str | None = None, session_id: str | None = None
    ) -> models.MemoriesCleared:
        """Withdraw an agent's memories of one user and/or session, or all of them without."""
        return self.run(calls.clear_memories(agent_id, user_id=user_id, session_id=session_id))

    def recall(
        self,
        agent_id: str,
        query: str,
        *,
        top_k: int = 5,
        min_score: float | None = None,
        types: Sequence[str] | None = None,
        include_statuses: Sequence[str] | None = None,
        mode: str | None = None,
        filter: Mapping[str, Any] | None = None,
        recency_half_life_days: float | None = None,
    ) -> models.Recall:
        """Memories relevant to the query, ranked by `mode` (`hybrid` by default, `dense` or
        `lexical`) within `filter`, newer ones favoured when `recency_half_life_days` is given;
        hits below the floor on the dense score are dropped (`min_score` overrides the floor)."""
        return self.run(
            calls.recall(
                agent_id,
                query,
                top_k=top_k,
                min_score=min_score,
                types=types,
                include_statuses=include_statuses,
                mode=mode,
                filter=filter,
                recency_half_life_days=recency_half_life_days,
            )
        )

    def wait_for_memory(
        self,
        agent_id: str,
        memory_id: str,
        timeout: float = 60.0,
        *,
        interval: float = 0.5,
        on_progress: Progress | None = None,
    ) -> models.Memory:
        """Poll until the memory is no longer `pending` (a 404 right after the write counts as pending)."""
        deadline = Deadline(timeout, interval)
        while True:
            try:
                memory = self.get_memory(agent_id, memory_id)
            except NotFound:
                memory = None
            if memory is not None:
                if on_progress:
                    on_progress(memory)
                if memory.status != MEMORY_PENDING:
                    return memory
            time.sleep(deadline.next_sleep(f"memory {memory_id}"))

    # Documents

    def upload_document(
        self,
        name: str,
        content: bytes | str,
        *,
        mime: str | None = None,
        multipart: bool = False,
    ) -> models.DocumentAccepted:
        """Upload text (sent as `text`) or bytes (base64, or multipart when asked)."""
        chosen = mime or guess_mime(name)
        return self.run(calls.upload_document(name, content, chosen, multipart=multipart))

    def upload_file(
        self,
        path: Path | str,
        *,
        name: str | None = None,
        mime: str | None = None,
        multipart: bool = True,
    ) -> models.DocumentAccepted:
        """Upload a local file; its name is the file name unless given."""
        source = Path(path)
        return self.upload_document(
            name or source.name,
            source.read_bytes(),
            mime=mime or guess_mime(source),
            multipart=multipart,
        )

    def get_document(self, document_id: str) -> models.Document:
        """A document's status and versions."""
        return self.run(calls.get_document(document_id))

    def list_passages(
        self, document_id: str, *, after: int | None = None, limit: int | None = None
    ) -> models.PassagePage:
        """One page of a document's current passages, in order (404 while it has none)."""
        return self.run(calls.list_passages(document_id, after=after, limit=limit))

    def delete_document(self, document_id: str) -> models.PruneJobAccepted:
        """Tombstone a document and everything derived from it; returns the prune job."""
        return self.run(calls.delete_document(document_id))

    def wait_for_document(
        self,
        document_id: str,
        timeout: float = 120.0,
        *,
        interval: float = 0.5,
        on_progress: Progress | None = None,
    ) -> models.Document:
        """Poll until the document is `extracted`, `failed` or `deleted`."""
        return self._poll(
            lambda: self.get_document(document_id),
            lambda document: document.status in DOCUMENT_FINAL,
            f"document {document_id}",
            Deadline(timeout, interval),
            on_progress,
        )

    # Records

    def import_records(
        self,
        record_type: str,
        rows: Sequence[Mapping[str, Any]],
        *,
        source: str = "engram-client",
        key_field: str | None = None,
        idempotency_key: str | None = None,
    ) -> models.ImportAccepted:
        """Import structured rows (the non-AI path); one idempotency key covers every retry."""
        return self.run(
            calls.import_records(
                record_type,
                rows,
                source=source,
                key_field=key_field,
                idempotency_key=idempotency_key,
            )
        )

    def get_import(self, import_id: str) -> models.ImportStatus:
        """An import's outcome."""
        return self.run(calls.get_import(import_id))

    def get_record(self, record_id: str) -> models.Record:
        """A record with its revisions and lineage."""
        return self.run(calls.get_record(record_id))

    def list_records(
        self,
        *,
        type: str | None = None,
        document_id: str | None = None,
        entity_id: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> models.RecordPage:
        """One page of records."""
        return self.run(
            calls.list_records(
                type=type, document_id=document_id, entity_id=entity_id, cursor=cursor, limit=limit
            )
        )

    def iter_records(
        self,
        *,
        type: str | None = None,
        document_id: str | None = None,
        entity_id: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[models.Record]:
        """Every matching record, following `next_cursor`."""
        cursor: str | None = None
        while True:
            page = self.list_records(
                type=type,
                document_id=document_id,
                entity_id=entity_id,
                cursor=cursor,
                limit=page_size,
            )
            yield from page.records
            if not page.next_cursor or not page.records:
                return
            cursor = page.next_cursor

    # Knowledge

    def get_entity(
        self,
        entity_id: str,
        *,
        include_withdrawn: bool = False,
        valid_at: str | None = None,
        as_of: str | None = None,
    ) -> models.Entity:
        """An entity's Markdown article and facts; `valid_at` (an ISO date or date-time) the
        values true then, `as_of` what Engram knew then."""
        return self.run(
            calls.get_entity(
                entity_id, include_withdrawn=include_withdrawn, valid_at=valid_at, as_of=as_of
            )
        )

    def list_entities(
        self, *, type: str | None = None, after: str | None = None, limit: int | None = None
    ) -> models.EntityPage:
        """One page of entities (optionally of one type)."""
        return self.run(calls.list_entities(type=type, after=after, limit=limit))

    def iter_entities(
        self, *, type: str | None = None, page_size: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every entity summary, following `next_after`."""
        after: str | None = None
        while True:
            page = self.list_entities(type=type, after=after, limit=page_size)
            yield from page.entities
            if not page.next_after or not page.entities:
                return
            after = page.next_after

    def search_knowledge(
        self,
        query: str,
        *,
        top_k: int = 5,
        min_score: float | None = None,
        mode: str | None = None,
        kinds: Sequence[str] | None = None,
        expand: int | None = None,
        valid_at: str | None = None,
        as_of: str | None = None,
    ) -> models.KnowledgeSearch:
        """Facts, article sections and document passages matching the query (`mode`: hybrid,
        dense or lexical; `kinds` keeps only those kinds: fact, article_section, passage;
        `expand` 1 or 2 follows each hit with its related entities' facts, nearest first;
        `valid_at`/`as_of` judge facts and sections as true or as known then)."""
        return self.run(
            calls.search_knowledge(
                query,
                top_k=top_k,
                min_score=min_score,
                mode=mode,
                kinds=kinds,
                expand=expand,
                valid_at=valid_at,
                as_of=as_of,
            )
        )

    def entity_relations(
        self,
        entity_id: str,
        *,
        direction: str | None = None,
        predicate: str | None = None,
        depth: int | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        valid_at: str | None = None,
        as_of: str | None = None,
    ) -> models.RelationPage:
        """One page of the entity's relations up to `depth` (1-3) hops, nearest first
        (`direction` out, in or both; `valid_at`/`as_of` read them in time); `next_cursor`
        continues it."""
        return self.run(
            calls.entity_relations(
                entity_id,
                direction=direction,
                predicate=predicate,
                depth=depth,
                limit=limit,
                cursor=cursor,
                valid_at=valid_at,
                as_of=as_of,
            )
        )

    def find_paths(
        self, start: str, goal: str, *, max_depth: int | None = None, limit: int | None = None
    ) -> models.Paths:
        """The shortest paths between two entities over relations walked either way."""
        return self.run(calls.find_paths(start, goal, max_depth=max_depth, limit=limit))

    def list_contradictions(
        self, *, status: str | None = None, limit: int | None = None
    ) -> list[models.Contradiction]:
        """Contradictions, optionally filtered by status (`open` or `resolved`)."""
        return self.run(calls.list_contradictions(status=status, limit=limit))

    def assert_fact(
        self, entity_id: str, attribute: str, value: Any, *, reason: str
    ) -> models.FactEdit:
        """Assert a value as a curator (key role `curator` or `admin`); it becomes a record of
        source `human` carrying this key's id, the time and the reason."""
        return self.run(calls.assert_fact(entity_id, attribute, value, reason))

    def withdraw_fact(
        self, entity_id: str, attribute: str, *, reason: str, value: Any = _UNSET
    ) -> models.FactEdit:
        """Withdraw a value (every value, without `value=`) as a curator; a value records still
        assert is contested (a contradiction opens), not removed."""
        return self.run(
            calls.withdraw_fact(
                entity_id,
                attribute,
                reason,
                value=None if value is _UNSET else value,
                has_value=value is not _UNSET,
            )
        )

    def resolve_contradiction(
        self, contradiction_id: str, *, keep: str | None = None, value: Any = _UNSET
    ) -> models.Resolution:
        """Keep one claim by fact id (`keep=`) or by value (`value=`)."""
        return self.run(
            calls.resolve_contradiction(
                contradiction_id,
                keep=keep,
                value=None if value is _UNSET else value,
                has_value=value is not _UNSET,
            )
        )

    # Prune, lineage, health

    def start_prune(
        self,
        *,
        older_than_days: int | None = None,
        record_ids: Sequence[str] | None = None,
        filter: Mapping[str, str] | None = None,
    ) -> models.PruneJobAccepted:
        """Start a prune job (one selection: age, record ids, or a filter)."""
        return self.run(
            calls.start_prune(older_than_days=older_than_days, record_ids=record_ids, filter=filter)
        )

    def get_prune_job(self, job_id: str, *, full_selector: bool = False) -> models.PruneJob:
        """A prune job's progress (`full_selector`: every selected id, not a preview)."""
        return self.run(calls.get_prune_job(job_id, full_selector=full_selector))

    def wait_for_prune_job(
        self,
        job_id: str,
        timeout: float = 300.0,
        *,
        interval: float = 1.0,
        on_progress: Progress | None = None,
    ) -> models.PruneJob:
        """Poll until the job completes; check `.verified_empty` on the returned job."""
        return self._poll(
            lambda: self.get_prune_job(job_id),
            lambda job: job.status in PRUNE_FINAL,
            f"prune job {job_id}",
            Deadline(timeout, interval),
            on_progress,
        )

    def lineage(self, item_id: str) -> models.Lineage:
        """What a record/document derives and what a fact/memory derives from."""
        return self.run(calls.lineage(item_id))

    def tenant_dead_letters(self, limit: int = 50) -> list[models.TenantDeadLetter]:
        """The caller's own dead letters, newest first: ids, reason, the item; never content."""
        return self.run(calls.tenant_dead_letters(limit))

    def replay_dead_letter(self, letter_id: str) -> str:
        """Replay one of the caller's dead letters once (`replayed`; a repeat raises a 409)."""
        return self.run(calls.replay_dead_letter(letter_id))

    def start_reindex(
        self,
        embedder: str,
        hashing_dimension: int | None = None,
        stores: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Move the memory and knowledge stores (or those named) to another embedder in the
        background (needs the `ops` role)."""
        return self.run(calls.start_reindex(embedder, hashing_dimension, stores))

    def reindex_progress(self) -> dict[str, Any]:
        """The latest reindex's state, done/total, rate and eta, each store's under `stores`
        (needs the `ops` role)."""
        return self.run(calls.reindex_progress())

    def list_dead_letters(self) -> list[models.DeadLetter]:
        """The tenant's dead letters, newest first (needs a key with the `ops` role)."""
        return self.run(calls.list_dead_letters())

    def replay_dead_letters(
        self, *, letter_id: str | None = None, consumer: str | None = None
    ) -> dict[str, str]:
        """Replay one letter, or all not-yet-replayed letters of a consumer; outcome per letter."""
        if (letter_id is None) == (consumer is None):
            raise ValueError("give exactly one of letter_id or consumer")
        return self.run(calls.replay_dead_letters(letter_id=letter_id, consumer=consumer))

    def create_key(self, role: str = "default", name: str | None = None) -> models.IssuedApiKey:
        """Issue a key of this tenant (`role` `default` or `admin`; the key needs `admin`);
        `.key` is its plaintext, shown only in this answer."""
        return self.run(calls.create_key(role, name))

    def list_keys(self) -> list[models.ApiKey]:
        """The tenant's keys, revoked ones too, oldest first (never a secret)."""
        return self.run(calls.list_keys())

    def revoke_key(self, key_id: str) -> models.ApiKey:
        """Revoke a key (the tenant's last admin key is a Conflict)."""
        return self.run(calls.revoke_key(key_id))

    def rotate_key(self, key_id: str) -> models.IssuedApiKey:
        """Issue a replacement with the same role and name; the old key is revoked at once."""
        return self.run(calls.rotate_key(key_id))

    def list_audit(
        self,
        *,
        action: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        target: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> models.AuditPage:
        """One page of the tenant's audit log, newest first (the key needs `admin`): who did
        what to which ids, never content."""
        return self.run(
            calls.list_audit(
                action=action, since=since, until=until, target=target, cursor=cursor, limit=limit
            )
        )

    def iter_audit(
        self,
        *,
        action: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        target: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[models.AuditEntry]:
        """Every matching audit entry, newest first, following `next_cursor`."""
        cursor: str | None = None
        while True:
            page = self.list_audit(
                action=action,
                since=since,
                until=until,
                target=target,
                cursor=cursor,
                limit=page_size,
            )
            yield from page.entries
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def list_types(self) -> list[models.RecordType]:
        """Every record type in force for the tenant, each `bundled` or `tenant` (declared)."""
        return self.run(calls.list_types())

    def get_type(self, name: str, version: int | None = None) -> models.RecordType:
        """A type's definition in force, or the tenant's `version` of it."""
        return self.run(calls.get_type(name, version))

    def type_versions(self, name: str) -> models.RecordTypeVersions:
        """The tenant's versions of a type, oldest first, and the bundled definition."""
        return self.run(calls.type_versions(name))

    def put_type(self, name: str, definition: Mapping[str, Any]) -> models.RecordType:
        """Declare the tenant's next version of a type (key with the `admin` role); documents
        extracted from now on use it. A bad definition raises ValidationFailed naming the field."""
        return self.run(calls.put_type(name, definition))

    def delete_type(self, name: str) -> models.RecordType:
        """Retire the tenant's definition of a type (admin); the bundled one applies again."""
        return self.run(calls.delete_type(name))

    def health(self) -> models.Health:
        """`/healthz`: the gateway process is up."""
        return self.run(calls.health())

    def ready(self) -> models.Health:
        """`/readyz`: the gateway's dependencies answer (503 raises ServiceUnavailable)."""
        return self.run(calls.ready())

    # Export and import

    def export_tenant(
        self,
        out: BinaryIO,
        *,
        agent_id: str | None = None,
        knowledge: bool = True,
        vectors: bool = False,
        on_progress: transfer.ExportProgress | None = None,
    ) -> transfer.ExportTally:
        """Stream the tenant's export (one agent's with `agent_id`; without documents and
        records when `knowledge` is false; with stored vectors when `vectors`) into `out`; the
        tally says what passed, its `checksum` None when the stream was cut (the file would be
        refused)."""
        tally = transfer.ExportTally()
        with self._http.stream(
            "GET",
            transfer.EXPORT_PATH,
            params=transfer.export_params(agent_id, knowledge, vectors),
            headers=transfer.headers(self.connection.api_key),
        ) as response:
            if not response.is_success:
                response.read()
                raise error_from_response(response)
            try:
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    tally.feed(chunk)
                    if on_progress:
                        on_progress(tally)
            except httpx.TransportError:
                return tally
        return tally

    def import_tenant(
        self, source: Path | str, *, on_progress: transfer.ImportProgress | None = None
    ) -> dict[str, Any]:
        """Send an export file to be restored into this tenant; the answer names each new id.
        Safe to run again: what an earlier run wrote is found, not written twice."""
        path = Path(source)
        size = path.stat().st_size

        def chunks() -> Iterator[bytes]:
            sent = 0
            with path.open("rb") as file:
                while chunk := file.read(transfer.CHUNK_BYTES):
                    sent += len(chunk)
                    yield chunk
                    if on_progress:
                        on_progress(sent, size)

        response = self._http.post(
            transfer.IMPORT_PATH,
            content=chunks(),
            headers={
                **transfer.headers(self.connection.api_key),
                "Content-Type": "application/x-ndjson",
                "Content-Length": str(size),
            },
            timeout=transfer.IMPORT_TIMEOUT,
        )
        if not response.is_success:
            raise error_from_response(response)
        answer: dict[str, Any] = response.json()
        return answer
