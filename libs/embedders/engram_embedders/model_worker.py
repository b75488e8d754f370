"""The child side of `ProcessModelEmbedder`: load the model, then answer until stdin closes."""

from __future__ import annotations

import os
import sys
from typing import IO, Any

from engram_embedders.local_models import make_local
from engram_embedders.model_process import read_frame, write_frame
from engram_embedders.onnx_text import OnnxTextEmbedder


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


def _load(requests: IO[bytes], replies: IO[bytes]) -> OnnxTextEmbedder | None:
    """The first frame names the options; the reply is the provenance the files gave."""
    _, options = read_frame(requests)
    cpus = options.pop("cpus", None)
    nice = options.pop("nice", 0)
    kind = options.pop("model", "minilm")
    try:
        if cpus:
            os.sched_setaffinity(0, set(cpus))
        if nice:
            os.nice(nice)
        embedder = make_local(kind, **options)
        provenance = embedder.load().provenance
    except Exception as exc:  # reported to the parent, which raises it there
        write_frame(replies, ("error", f"{type(exc).__name__}: {exc}"))
        return None
    write_frame(replies, ("ok", provenance.model_dump(exclude={"fingerprint"})))
    return embedder


def _answer(embedder: OnnxTextEmbedder, requests: IO[bytes], replies: IO[bytes]) -> None:
    """One reply per request, in order, until the parent closes the pipe."""
    while True:
        action, texts = read_frame(requests)
        before = embedder.model_runs
        reply: Any
        try:
            vectors = embedder.embed_sync(texts, queries=action == "embed_queries").vectors
            reply = ("ok", (vectors, embedder.model_runs - before))
        except Exception as exc:  # one failed batch; the child goes on
            reply = ("error", f"{type(exc).__name__}: {exc}")
        write_frame(replies, reply)
