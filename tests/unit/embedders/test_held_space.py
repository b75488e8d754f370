"""A store written with MiniLM's other file keeps being served in its own space after the
default file changed, instead of refusing every recall until a reindex."""

from __future__ import annotations

import pytest

from engram_embedders.minilm import MiniLMEmbedder
from engram_embedders.reindex import Space
from engram_embedders.settings import ReindexSettings
from tests.support.models import model_dir

pytestmark = pytest.mark.unit


def settings(**changes: object) -> ReindexSettings:
    return ReindexSettings.model_validate({"model_dir": str(model_dir()), **changes})


def fingerprint(file: str) -> str:
    return MiniLMEmbedder(file=file, model_dir=model_dir()).provenance.fingerprint  # type: ignore[arg-type]


def test_the_default_file_is_the_quantized_one() -> None:
    assert ReindexSettings().minilm_file == "quantized"
    assert MiniLMEmbedder(model_dir=model_dir()).provenance.fingerprint == fingerprint("quantized")


@pytest.mark.parametrize("configured, held", [("quantized", "wheel"), ("wheel", "quantized")])
async def test_a_store_of_the_other_file_is_served_in_its_own_space(
    configured: str, held: str
) -> None:
    embedder, adopted = await settings(minilm_file=configured).embedder_holding(
        Space("memories", "minilm"), fingerprint(held)
    )
    assert adopted
    assert embedder.provenance.fingerprint == fingerprint(held)
    await embedder.aclose()


async def test_a_store_of_the_configured_file_or_a_new_one_keeps_it() -> None:
    configured = settings()
    for held in (fingerprint("quantized"), None):
        embedder, adopted = await configured.embedder_holding(Space("memories", "minilm"), held)
        assert not adopted
        assert embedder.provenance.fingerprint == fingerprint("quantized")
        await embedder.aclose()


async def test_a_store_of_an_unknown_space_is_left_to_the_reader_to_refuse() -> None:
    embedder, adopted = await settings().embedder_holding(Space("memories", "minilm"), "0" * 64)
    assert not adopted
    assert embedder.provenance.fingerprint == fingerprint("quantized")
    await embedder.aclose()


async def test_only_minilm_has_another_file() -> None:
    embedder, adopted = await settings().embedder_holding(
        Space("memories", "hashing", 384), fingerprint("wheel")
    )
    assert not adopted
    assert embedder.provenance.model_id.startswith("engram-hashing")
    await embedder.aclose()
