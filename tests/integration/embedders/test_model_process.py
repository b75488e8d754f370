"""MiniLM in a child process: the same vectors and provenance, and a dead child is replaced.

Integration tier: each test starts real model processes (about a second each to load).
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator

import numpy as np
import pytest

from engram_embedders import (
    BgeSmallEmbedder,
    EmbedderError,
    InvalidEmbeddingInput,
    MiniLMEmbedder,
    make_embedder,
)
from engram_embedders.model_process import ProcessModelEmbedder
from tests.support.models import model_dir
from tests.support.polling import until

_MODELS = model_dir()
TEXTS = ["The cat sits on the mat", "A kitten is resting on a rug", "Quarterly tax filing"]


@pytest.fixture
async def in_child() -> AsyncIterator[ProcessModelEmbedder]:
    embedder = ProcessModelEmbedder(threads=1, batch_size=2)
    yield embedder
    await embedder.aclose()


async def test_vectors_and_provenance_match_the_model_run_in_process(
    in_child: ProcessModelEmbedder,
) -> None:
    here = MiniLMEmbedder(threads=1, batch_size=2)
    theirs, ours = await in_child.embed(TEXTS), await here.embed(TEXTS)
    assert theirs.provenance == ours.provenance == in_child.provenance
    assert np.array_equal(theirs.vectors, ours.vectors)
    assert in_child.model_runs == 2
    assert in_child.pid is not None and in_child.pid != os.getpid()
    await here.aclose()


async def test_invalid_input_is_refused_before_the_child_is_asked(
    in_child: ProcessModelEmbedder,
) -> None:
    with pytest.raises(InvalidEmbeddingInput):
        await in_child.embed(["fine", "   "])
    assert in_child.model_runs == 0
    assert in_child.pid is None


async def test_a_dead_child_is_replaced_by_one_that_loaded_the_same_weights(
    in_child: ProcessModelEmbedder,
) -> None:
    before = await in_child.embed(TEXTS[:1])
    first = in_child.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    until(lambda: in_child.pid is None, "the dead child noticed", 5, 0.01)
    after = await in_child.embed(TEXTS[:1])
    assert in_child.pid not in (None, first)
    assert np.array_equal(after.vectors, before.vectors)
    assert after.provenance == before.provenance


async def test_missing_model_files_are_reported_from_the_child() -> None:
    embedder = ProcessModelEmbedder(weights_path="/nonexistent/model.onnx")
    with pytest.raises(EmbedderError, match="ModelFilesMissing"):
        await embedder.embed(TEXTS[:1])
    await embedder.aclose()


async def test_the_child_runs_on_the_cpus_it_was_given() -> None:
    embedder = ProcessModelEmbedder(cpus=frozenset({0}))
    await embedder.embed(TEXTS[:1])
    assert embedder.pid is not None
    assert os.sched_getaffinity(embedder.pid) == {0}
    await embedder.aclose()


async def test_the_child_runs_at_the_lower_priority_it_was_given() -> None:
    embedder = ProcessModelEmbedder(nice=7)
    await embedder.embed(TEXTS[:1])
    assert embedder.pid is not None
    assert os.getpriority(os.PRIO_PROCESS, embedder.pid) == os.getpriority(os.PRIO_PROCESS, 0) + 7
    await embedder.aclose()


@pytest.mark.parametrize("nice", [-1, 20])
def test_nice_is_a_lower_priority_within_what_the_kernel_allows(nice: int) -> None:
    with pytest.raises(ValueError, match="nice"):
        ProcessModelEmbedder(nice=nice)


@pytest.mark.parametrize("cpus", [frozenset(), frozenset({os.cpu_count() or 1})])
def test_cpus_must_name_cpus_of_this_machine(cpus: frozenset[int]) -> None:
    with pytest.raises(ValueError, match="cpus"):
        ProcessModelEmbedder(cpus=cpus)


async def test_the_factory_builds_it_on_request() -> None:
    embedder = make_embedder("minilm", own_process=True, threads=1)
    assert isinstance(embedder, ProcessModelEmbedder)
    await embedder.aclose()


async def test_bge_in_a_child_puts_the_query_instruction_on_queries_only() -> None:
    embedder = make_embedder("bge-small", own_process=True, threads=1, model_dir=_MODELS)
    here = BgeSmallEmbedder(threads=1, model_dir=_MODELS)
    assert isinstance(embedder, ProcessModelEmbedder)
    queries, documents = await embedder.embed_queries(TEXTS[:1]), await embedder.embed(TEXTS[:1])
    assert queries.provenance == documents.provenance == here.provenance
    assert np.array_equal(queries.vectors, (await here.embed_queries(TEXTS[:1])).vectors)
    assert np.array_equal(documents.vectors, (await here.embed(TEXTS[:1])).vectors)
    assert not np.allclose(queries.vectors, documents.vectors, atol=1e-3)
    await embedder.aclose()
    await here.aclose()
