"""The base URL and key come from arguments, then the environment, then `.engram/run.env`."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram_client import EngramError, resolve_connection
from engram_client.settings import DEFAULT_URL, find_run_env

pytestmark = pytest.mark.unit


def _run_env(root: Path) -> Path:
    path = root / ".engram" / "run.env"
    path.parent.mkdir(parents=True)
    path.write_text(
        "# written by make run\nENGRAM_URL=http://127.0.0.1:9999/\nENGRAM_API_KEY=egk_file\n"
    )
    return path


def test_arguments_win_over_environment_and_file(tmp_path: Path) -> None:
    env_file = _run_env(tmp_path)
    env = {"ENGRAM_URL": "http://env:1", "ENGRAM_API_KEY": "egk_env"}
    got = resolve_connection("http://arg:2", "egk_arg", env=env, env_file=env_file)
    assert (got.base_url, got.api_key) == ("http://arg:2", "egk_arg")


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    env_file = _run_env(tmp_path)
    got = resolve_connection(env={"ENGRAM_API_KEY": "egk_env"}, env_file=env_file)
    assert (got.base_url, got.api_key) == ("http://127.0.0.1:9999", "egk_env")


def test_run_env_is_found_from_a_subfolder(tmp_path: Path) -> None:
    expected = _run_env(tmp_path)
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert find_run_env(nested) == expected


def test_defaults_when_nothing_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    got = resolve_connection(env={})
    assert (got.base_url, got.api_key) == (DEFAULT_URL, None)


def test_a_named_env_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(EngramError, match="does not exist"):
        resolve_connection(env={}, env_file=tmp_path / "missing.env")


def test_the_key_is_not_in_the_repr(tmp_path: Path) -> None:
    got = resolve_connection("http://x", "egk_very_secret", env={})
    assert "egk_very_secret" not in repr(got)
