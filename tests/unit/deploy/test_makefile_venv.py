"""`make venv` prints one line, keeps pip's output in a log, and shows its tail only on failure."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[3]
NOISY_PIP = '#!/bin/sh\necho "BuildBackendWarning: Editable installation."\necho noise >&2\nexit ${FAKE_PIP_EXIT:-0}\n'


def _make_venv(venv: Path, pip_exit: int) -> subprocess.CompletedProcess[str]:
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    for name, body in (("python", "#!/bin/sh\nexit 0\n"), ("pip", NOISY_PIP)):
        (venv / "bin" / name).write_text(body)
        (venv / "bin" / name).chmod(0o755)
    env = {**os.environ, "FAKE_PIP_EXIT": str(pip_exit)}
    return subprocess.run(
        ["make", "--no-print-directory", "venv", f"VENV={venv}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_successful_install_prints_one_line(tmp_path: Path) -> None:
    done = _make_venv(tmp_path / "venv", 0)
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("[engram] venv: installing")
    assert done.stderr == ""
    assert "BuildBackendWarning" in (tmp_path / "venv" / "pip-install.log").read_text()


def test_a_failed_install_shows_pip_output_and_where_the_log_is(tmp_path: Path) -> None:
    failed = _make_venv(tmp_path / "venv", 1)
    assert failed.returncode != 0
    assert "BuildBackendWarning" in failed.stdout
    assert "pip failed; its whole output is in" in failed.stderr
