"""The child side of `ProcessMiniLMEmbedder`: load MiniLM, then answer until stdin closes."""

from __future__ import annotations

import os
import sys
from typing import IO, Any

from engram_embedders.minilm import MiniLMEmbedder
from engram_embedders.model_process import read_frame, write_frame


def serve() -> None:
    """Answer the parent's frames on the original stdout; anything else printed goes to stderr."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = sys.stdin.buffer
    try:
        embedder = _load(requests, replies)
        if embedder is not None:
            _answer(embedder, requests, replies)
    except EOFError:
        return


def _load(requests: IO[bytes], replies: IO[bytes]) -> MiniLMEmbedder | None:
    """The first frame names the options; the reply is the provenance the files gave."""
    _, options = read_frame(requests)
    cpus = options.pop("cpus", None)
    try:
        if cpus:
            os.sched_setaffinity(0, set(cpus))
        embedder = MiniLMEmbedder(**options)
        provenance = embedder.load().provenance
    except Exception as exc:  # reported to the parent, which raises it there
        write_frame(replies, ("error", f"{type(exc).__name__}: {exc}"))
        return None
    write_frame(replies, ("ok", provenance.model_dump(exclude={"fingerprint"})))
    return embedder


def _answer(embedder: MiniLMEmbedder, requests: IO[bytes], replies: IO[bytes]) -> None:
    """One reply per request, in order, until the parent closes the pipe."""
    while True:
        _, texts = read_frame(requests)
        before = embedder.model_runs
        reply: Any
        try:
            vectors = embedder.embed_sync(texts).vectors
            reply = ("ok", (vectors, embedder.model_runs - before))
        except Exception as exc:  # one failed batch; the child goes on
            reply = ("error", f"{type(exc).__name__}: {exc}")
        write_frame(replies, reply)
