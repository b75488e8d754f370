"""Opening a service's collection at start-up: created if new, its lexical encoder adopted (or,
for a service that cannot, refused) if it differs, and its stored embedder fingerprint returned
(a foreign one is refused per query)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from engram_vectors.errors import CollectionNotFound, LexicalMismatch
from engram_vectors.lexical import ENCODERS, LEXICAL_ENCODER
from engram_vectors.port import VectorStore

log = logging.getLogger(__name__)


async def open_collection(
    store: VectorStore, name: str, dimension: int, fingerprint: str, *, lexical: str | None
) -> str:
    """Create the collection for this embedder and lexical encoder if new; return the embedder
    fingerprint it holds. LexicalMismatch when it holds another encoder's sparse vectors (or
    none, or some where the service keeps none): they would not match the queries."""
    try:
        info = await store.collection_info(name)
    except CollectionNotFound:
        await store.ensure_collection(name, dimension, fingerprint, lexical=lexical)
        return fingerprint
    if info.lexical != lexical:
        raise LexicalMismatch(name, info.lexical, lexical)
    return info.fingerprint


async def held_fingerprint(store: VectorStore, name: str) -> str | None:
    """The embedder fingerprint a collection holds, or None when it does not exist yet (a
    service picks the embedder of an existing collection's space before opening it)."""
    try:
        info = await store.collection_info(name)
    except CollectionNotFound:
        return None
    return info.fingerprint


class ServiceCollection:
    """A service's one collection, tied to the embedder fingerprint it was created for; a
    service's vectors adapter extends it with its own points and queries.

    With `adopts`, the service encodes with `self.lexical` (passing it to document_vector and
    query_vector), so opening a collection built with an earlier known encoder adopts that
    encoder instead of refusing it; without, any other encoder is refused."""

    def __init__(
        self, store: VectorStore, collection: str, *, lexical: bool = True, adopts: bool = False
    ) -> None:
        self.store = store
        self.collection = collection
        self.lexical = LEXICAL_ENCODER if lexical else None
        self.adopts = adopts

    async def open(self, dimension: int, fingerprint: str) -> str:
        """Create the collection for this embedder if new; return the fingerprint it holds
        (LexicalMismatch when it was built with another lexical encoder it cannot adopt, or
        without lexical vectors)."""
        if self.adopts and self.lexical is not None:
            await self._adopt()
        return await open_collection(
            self.store, self.collection, dimension, fingerprint, lexical=self.lexical
        )

    async def _adopt(self) -> None:
        """Take the known lexical encoder an existing collection was built with."""
        try:
            info = await self.store.collection_info(self.collection)
        except CollectionNotFound:
            return
        if info.lexical in ENCODERS and info.lexical != self.lexical:
            log.info(
                f"collection built with lexical encoder {info.lexical!r}: encoding with it "
                f"(new collections get {LEXICAL_ENCODER!r})",
                extra={"collection": self.collection},
            )
            self.lexical = info.lexical

    async def fingerprint(self) -> str:
        """The embedder fingerprint stored with the collection."""
        return await self.store.collection_fingerprint(self.collection)


async def open_at_start(
    opening: Callable[[int, str], Awaitable[str]],
    dimension: int,
    fingerprint: str,
    *,
    collection: str,
    remedy: str,
    reader: str,
) -> None:
    """Open a service's collection for its embedder: a lexical mismatch is logged with `remedy`
    and stops start-up; another embedder's collection is only warned of (`reader` refuses it)."""
    try:
        held = await opening(dimension, fingerprint)
    except LexicalMismatch as refused:
        log.error(f"{refused}: {remedy}", extra={"collection": collection})
        raise
    if held != fingerprint:
        log.warning(
            f"collection embedder differs from the configured embedder; {reader} will refuse",
            extra={"collection": collection},
        )
