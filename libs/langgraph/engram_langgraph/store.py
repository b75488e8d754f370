"""`EngramStore`: LangGraph's `BaseStore` over Engram, so a graph's long-term memory is Engram's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    validate_op_namespace,
)

from engram_langgraph.async_ops import AsyncOps
from engram_langgraph.clients import AsyncClient, SyncClient
from engram_langgraph.plans import Settings
from engram_langgraph.sync_ops import SyncOps


class EngramStore(BaseStore):
    """Items as memories: `batch` runs on the blocking client, `abatch` on the async one.

    Give `client` (an `EngramClient`) for `put`/`get`/`search`/..., `async_client` (an
    `AsyncEngramClient`) for `aput`/`aget`/`asearch`/..., or both. The store never closes them.
    """

    def __init__(
        self,
        client: SyncClient | None = None,
        *,
        async_client: AsyncClient | None = None,
        agents: Mapping[str, str] | None = None,
        index_fields: Sequence[str] | None = None,
        memory_type: str = "langgraph",
        wait_timeout: float = 30.0,
        wait_interval: float = 0.05,
        min_score: float | None = -1.0,
        page_size: int = 100,
        max_content_chars: int = 8000,
    ) -> None:
        if client is None and async_client is None:
            raise ValueError("EngramStore needs a client, an async_client, or both")
        self.settings = Settings(
            agents=dict(agents or {}),
            index_fields=list(index_fields) if index_fields is not None else None,
            memory_type=memory_type,
            wait_timeout=wait_timeout,
            wait_interval=wait_interval,
            min_score=min_score,
            page_size=page_size,
            max_content_chars=max_content_chars,
        )
        self._sync = SyncOps(client, self.settings) if client is not None else None
        self._async = AsyncOps(async_client, self.settings) if async_client is not None else None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order on the blocking client, one result per op."""
        if self._sync is None:
            raise RuntimeError("this EngramStore has no blocking client: use the a* methods")
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            results.append(_run_sync(self._sync, op))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops in order on the async client, one result per op."""
        if self._async is None:
            raise RuntimeError("this EngramStore has no async client: use the blocking methods")
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            results.append(await _run_async(self._async, op))
        return results


def _run_sync(ops: SyncOps, op: Op) -> Result:
    """One op through the blocking operations."""
    if isinstance(op, GetOp):
        return ops.get(op)
    if isinstance(op, PutOp):
        ops.put(op)
        return None
    if isinstance(op, SearchOp):
        return ops.search(op)
    if isinstance(op, ListNamespacesOp):
        return ops.list_namespaces(op)
    raise ValueError(f"unknown store operation: {type(op).__name__}")


async def _run_async(ops: AsyncOps, op: Op) -> Result:
    """One op through the async operations."""
    if isinstance(op, GetOp):
        return await ops.get(op)
    if isinstance(op, PutOp):
        await ops.put(op)
        return None
    if isinstance(op, SearchOp):
        return await ops.search(op)
    if isinstance(op, ListNamespacesOp):
        return await ops.list_namespaces(op)
    raise ValueError(f"unknown store operation: {type(op).__name__}")
