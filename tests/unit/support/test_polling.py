"""The shared polling helper: the first ready answer, or a failure naming what it last saw."""

from __future__ import annotations

import pytest

from tests.support.polling import until, until_async

pytestmark = pytest.mark.unit


def test_the_first_ready_answer_is_returned() -> None:
    seen: list[int] = []

    def check() -> int:
        seen.append(len(seen))
        return seen[-1]

    assert until(check, "a third poll", 5, 0) == 1, "truthy by default"
    assert until(check, "an even answer above 2", 5, 0, ready=lambda n: n > 2 and n % 2 == 0) == 4


def test_a_timeout_names_what_was_awaited_and_the_last_answer() -> None:
    with pytest.raises(AssertionError, match=r"waiting for the door; last: 'shut'"):
        until(lambda: "shut", "the door", 0.05, 0.01, ready=lambda state: state == "open")


def test_a_long_last_answer_is_cut_short() -> None:
    with pytest.raises(AssertionError, match=r"\.\.\. \(\d+ characters\)") as caught:
        until(lambda: list(range(5000)), "nothing", 0, 0, ready=lambda _: False)
    assert len(str(caught.value)) < 2200


async def test_the_async_form_awaits_coroutine_checks_and_calls_plain_ones() -> None:
    seen: list[int] = []

    async def later() -> int:
        seen.append(len(seen))
        return seen[-1]

    assert await until_async(later, "a second poll", 5, 0) == 1
    assert await until_async(lambda: "plain", "a plain answer", 5, 0) == "plain"
    with pytest.raises(AssertionError, match="waiting for never"):
        await until_async(later, "never", 0.05, 0.01, ready=lambda _: False)
