"""The store's operations over the blocking client (the async twin is `async_ops`)."""

from __future__ import annotations

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    PutOp,
    SearchItem,
    SearchOp,
)

from engram_client import NotFound, models
from engram_langgraph import filters, items, namespaces, plans
from engram_langgraph.clients import SyncClient
from engram_langgraph.errors import MemoryNotStored
from engram_langgraph.plans import Settings

ACTIVE = "active"
LISTING_PAGE = 1000


class SyncOps:
    """Gets, puts, searches and namespace listings through `EngramClient`."""

    def __init__(self, client: SyncClient, settings: Settings) -> None:
        self.client = client
        self.settings = settings

    def current(self, namespace: tuple[str, ...], key: str) -> list[models.Memory]:
        """The item's live memories, newest first (more than one only while a put replaces)."""
        scope = namespaces.scope_of(namespace, self.settings.agents)
        page = self.client.list_memories(
            scope.agent_id,
            status=ACTIVE,
            filter=items.item_filter(namespace, key, scope),
            order="recent",
            limit=self.settings.page_size,
        )
        return [m for m in page.memories if items.is_item(m.metadata)]

    def get(self, op: GetOp) -> Item | None:
        """The item's newest memory, or None (also for a namespace no agent can hold)."""
        try:
            found = self.current(tuple(op.namespace), op.key)
        except (InvalidNamespaceError, NotFound):
            return None
        return items.to_item(found[0]) if found else None

    def put(self, op: PutOp) -> None:
        """Write the new memory, wait until it is stored, then forget the old ones; a None
        value forgets them only."""
        namespace = tuple(op.namespace)
        scope = namespaces.scope_of(namespace, self.settings.agents)
        old = self.current(namespace, op.key)
        if op.value is not None:
            write = items.memory_write(
                namespace,
                op.key,
                op.value,
                fields=op.index if isinstance(op.index, list) else self.settings.index_fields,
                created_at=items.created_at_of(old[0]) if old else None,
                max_chars=self.settings.max_content_chars,
            )
            accepted = self.client.write_memory(
                scope.agent_id,
                write.content,
                type=self.settings.memory_type,
                metadata=write.metadata,
                user_id=scope.user_id,
                session_id=scope.session_id,
                allow_duplicate=True,
            )
            if self.settings.wait_timeout > 0:
                stored = self.client.wait_for_memory(
                    scope.agent_id,
                    accepted.memory_id,
                    self.settings.wait_timeout,
                    interval=self.settings.wait_interval,
                )
                if stored.status != ACTIVE:
                    raise MemoryNotStored(stored)
        for memory in old:
            try:
                self.client.delete_memory(scope.agent_id, memory.memory_id)
            except NotFound:
                continue

    def search(self, op: SearchOp) -> list[SearchItem]:
        """Recall (hybrid) with a query, else the listing, newest first; filter exact."""
        plan = plans.search(op, self.settings)
        if plan is None:
            return []
        try:
            if plan.query is not None and plan.agent_id is not None:
                return self._recall(op, plan)
            return self._list(op, plan)
        except NotFound:
            return []

    def _recall(self, op: SearchOp, plan: plans.Search) -> list[SearchItem]:
        """Recall's hits in fused order, the filter checked on each value."""
        assert plan.agent_id is not None and plan.query is not None
        answer = self.client.recall(
            plan.agent_id,
            plan.query,
            top_k=plan.top_k,
            min_score=self.settings.min_score,
            mode="hybrid",
            filter=plan.filter,
        )
        hits = items.newest_per_key(
            [
                items.to_search_item(hit, hit.scores.fused)
                for hit in answer.results
                if items.is_item(hit.metadata)
            ]
        )
        kept = [hit for hit in hits if filters.keeps(hit.value, op.filter)]
        return kept[op.offset : op.offset + op.limit]

    def _list(self, op: SearchOp, plan: plans.Search) -> list[SearchItem]:
        """Walk the listing (newest first, so an item's first memory is its newest version)
        until `offset + limit` items met the filter."""
        kept: list[SearchItem] = []
        seen: set[tuple[tuple[str, ...], str]] = set()
        cursor: str | None = None
        while len(kept) < op.offset + op.limit:
            page = self.client.list_memories(
                plan.agent_id,
                status=ACTIVE,
                filter=plan.filter,
                cursor=cursor,
                limit=self.settings.page_size,
                order="recent",
            )
            for memory in page.memories:
                if not items.is_item(memory.metadata):
                    continue
                item = items.to_search_item(memory, None)
                if (item.namespace, item.key) in seen:
                    continue
                seen.add((item.namespace, item.key))
                if filters.keeps(item.value, op.filter):
                    kept.append(item)
            if not page.next_cursor or not page.memories:
                break
            cursor = page.next_cursor
        return kept[op.offset : op.offset + op.limit]

    def list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        """Every namespace holding a live item, from one walk over the caller's store memories."""
        found: set[tuple[str, ...]] = set()
        cursor: str | None = None
        while True:
            page = self.client.list_memories(
                None,
                status=ACTIVE,
                filter=plans.namespace_listing(op),
                cursor=cursor,
                limit=LISTING_PAGE,
            )
            found.update(
                items.namespace_of(m.metadata or {})
                for m in page.memories
                if items.is_item(m.metadata)
            )
            if not page.next_cursor or not page.memories:
                break
            cursor = page.next_cursor
        return namespaces.select(
            found, op.match_conditions or (), op.max_depth, op.limit, op.offset
        )
