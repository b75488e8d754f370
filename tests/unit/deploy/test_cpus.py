"""`--model-cpus`: CPU numbers of this machine, always leaving one for everything else."""

from __future__ import annotations

import os

import pytest

from engram_devstack.cpus import model_env, others, parse_cpus
from engram_devstack.errors import DevstackError

pytestmark = pytest.mark.unit

MINE = sorted(os.sched_getaffinity(0))


@pytest.mark.skipif(len(MINE) < 2, reason="needs two CPUs")
def test_one_cpu_for_the_model_and_the_rest_for_everything_else() -> None:
    model = parse_cpus(str(MINE[-1]))
    assert model == {MINE[-1]}
    assert others(model) == set(MINE[:-1])
    assert model_env(model) == {"ENGRAM_EMBEDDING_MINILM_CPUS": f"[{MINE[-1]}]"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("one", "CPU numbers like 1"),
        (str(max(MINE) + 1), "choose among"),
        (",".join(map(str, MINE)), "no CPU for everything else"),
    ],
)
def test_a_bad_choice_says_what_to_give(text: str, says: str) -> None:
    with pytest.raises(DevstackError, match=says):
        parse_cpus(text)
