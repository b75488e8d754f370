"""`make run` keeps its logs, data and secrets to their owner, and hands every service one
internal token that survives restarts."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram_devstack.paths import Layout
from engram_devstack.private import internal_token, make_private
from engram_devstack.stack import Endpoints, Ports, Stack
from engram_devstack.supervisor import RunOptions, Supervisor

pytestmark = pytest.mark.unit


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def restored_umask() -> Iterator[None]:
    """make_private sets this process's umask; the tests around this one keep theirs."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_logs_and_data_are_owner_only_even_when_an_older_run_left_them_open(
    tmp_path: Path, restored_umask: None
) -> None:
    layout = Layout(tmp_path)
    layout.logs_dir.mkdir(parents=True, mode=0o755)
    layout.data_dir.mkdir(mode=0o755)
    os.chmod(layout.engram_dir, 0o755)
    old_log = layout.logs_dir / "gateway.log"
    old_log.write_text("tnt_123\n")
    old_log.chmod(0o644)

    make_private(layout)

    for directory in (layout.engram_dir, layout.logs_dir, layout.data_dir):
        assert mode(directory) == 0o700, directory
    assert mode(old_log) == 0o600


def test_what_the_children_create_later_is_owner_only(tmp_path: Path, restored_umask: None) -> None:
    layout = Layout(tmp_path)
    make_private(layout)
    log = layout.logs_dir / "memory.log"
    kafka_dir = layout.data_dir / "kafka"
    subprocess.run(["sh", "-c", f"echo tnt_1 > {log}; mkdir {kafka_dir}"], check=True)
    assert mode(log) == 0o600
    assert mode(kafka_dir) == 0o700


def test_the_token_is_made_once_kept_owner_only_and_reused(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    first = internal_token(layout, environ={})
    assert len(first) == 64
    assert mode(layout.internal_token_file) == 0o600
    assert internal_token(layout, environ={}) == first
    assert internal_token(Layout(tmp_path / "other"), environ={}) != first


def test_an_operator_token_wins(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert internal_token(layout, environ={"ENGRAM_INTERNAL_TOKEN": "chosen"}) == "chosen"
    assert not layout.internal_token_file.exists()


def test_every_service_gets_the_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_INTERNAL_TOKEN", raising=False)
    layout = Layout(tmp_path)
    running = Supervisor(layout, Stack(layout, Ports()), RunOptions())
    env = running._service_env(Endpoints("127.0.0.1:9092", "mongodb://127.0.0.1:27017/"))
    assert env["ENGRAM_INTERNAL_TOKEN"] == internal_token(layout, environ={})
