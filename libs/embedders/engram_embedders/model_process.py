"""A local model in a child process of its own, so it never waits for the service's GIL.

In-process, the model thread needs the interpreter lock between its calls into the tokenizer,
the ONNX session and numpy; when the service's event loop holds the lock and is descheduled
on a busy core, the model waits too. The child runs only the model, on an interpreter of its
own. Requests and answers cross one pipe, framed with their length; the child is started on
first use and again after it dies.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

from engram_embedders.errors import EmbedderError
from engram_embedders.provenance import Embeddings, Provenance
from engram_embedders.validation import validate_texts

_FRAME = struct.Struct("!I")


def write_frame(stream: IO[bytes], message: Any) -> None:
    """Pickle one message behind its length; the pipe carries nothing else."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(body)) + body)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """One message written by `write_frame`; EOFError when the other side has gone."""
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        raise EOFError("the pipe closed")
    (size,) = _FRAME.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        raise EOFError("the pipe closed mid-message")
    return pickle.loads(body)


class ProcessModelEmbedder:
    """A local ONNX embedder (MiniLM, bge-small) run by a child process; same vectors, same
    provenance. `nice` lowers the child's CPU priority, so the kernel gives a core to any other
    process that wants one first (a bulk lane's model)."""

    def __init__(
        self,
        *,
        model: str = "minilm",
        cpus: frozenset[int] | None = None,
        nice: int = 0,
        **model_options: Any,
    ) -> None:
        if not 0 <= nice <= 19:
            raise ValueError(f"nice must be 0 (the service's priority) to 19, not {nice}")
        if cpus is not None and not cpus:
            raise ValueError("cpus, when given, must name at least one CPU")
        if cpus is not None and not hasattr(os, "sched_setaffinity"):
            raise ValueError("pinning the model to cpus needs Linux (os.sched_setaffinity)")
        if cpus is not None and not all(0 <= cpu < (os.cpu_count() or 1) for cpu in cpus):
            raise ValueError(f"cpus {sorted(cpus)} are not all on this machine of {os.cpu_count()}")
        self.nice = nice
        """How much lower than its parent the child runs."""
        self._options = {
            **model_options,
            "model": model,
            "cpus": sorted(cpus) if cpus else None,
            "nice": nice,
        }
        self._child: subprocess.Popen[bytes] | None = None
        self._provenance: Provenance | None = None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-model-io")
        self._model_runs = 0

    @property
    def model_runs(self) -> int:
        """How many model batches the child has run for this embedder."""
        return self._model_runs

    @property
    def pid(self) -> int | None:
        """The running child's process id, if there is one."""
        child = self._child
        return child.pid if child is not None and child.poll() is None else None

    @property
    def provenance(self) -> Provenance:
        """Provenance the child read from the files it loaded; starts the child if needed."""
        if self._provenance is not None:
            return self._provenance
        with self._lock:
            self._ensure_child()
            assert self._provenance is not None
            return self._provenance

    async def embed(self, texts: Sequence[str]) -> Embeddings:
        """Validate on the event loop, then wait for the child on the embedder's own thread."""
        checked = validate_texts(texts)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, "embed", checked)

    async def embed_queries(self, texts: Sequence[str]) -> Embeddings:
        """Like embed(); the child adds the model's query instruction."""
        checked = validate_texts(texts)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, "embed_queries", checked)

    async def aclose(self) -> None:
        """Stop the child and the thread that talks to it."""
        self._executor.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._stop_child()

    def _call(self, action: str, texts: list[str]) -> Embeddings:
        """One request, one answer; a dead child is reported and replaced on the next call."""
        with self._lock:
            child = self._ensure_child()
            assert child.stdin is not None and child.stdout is not None
            try:
                write_frame(child.stdin, (action, texts))
                status, value = read_frame(child.stdout)
            except (EOFError, OSError) as exc:
                self._stop_child()
                raise EmbedderError(f"the model process stopped: {exc}") from exc
            if status != "ok":
                raise EmbedderError(f"the model process failed: {value}")
            vectors, runs = value
            self._model_runs += runs
            assert self._provenance is not None
            return Embeddings(vectors=vectors, provenance=self._provenance)

    def _ensure_child(self) -> subprocess.Popen[bytes]:
        """The running child, started (and its model loaded) if there is none."""
        if self._child is not None and self._child.poll() is None:
            return self._child
        self._stop_child()
        child = subprocess.Popen(
            [sys.executable, "-c", "from engram_embedders.model_worker import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert child.stdin is not None and child.stdout is not None
        try:
            write_frame(child.stdin, ("load", self._options))
            status, value = read_frame(child.stdout)
        except (EOFError, OSError) as exc:
            raise _discarded(child, f"the model process did not start: {exc}") from exc
        if status != "ok":
            raise _discarded(child, f"the model process could not load the model: {value}")
        provenance = Provenance.model_validate(value)
        if self._provenance is not None and provenance != self._provenance:
            raise _discarded(child, "the restarted model process loaded different weights")
        self._child, self._provenance = child, provenance
        return child

    def _stop_child(self) -> None:
        """Close the child's stdin (it exits on EOF); kill it if it lingers."""
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            try:
                child.stdin.close()
            except OSError:
                pass
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


def _discarded(child: subprocess.Popen[bytes], reason: str) -> EmbedderError:
    """Kill a child that cannot serve, and say why."""
    child.kill()
    child.wait()
    return EmbedderError(reason)
