"""ENGRAM_TEST_BACKEND and the environment choose the servers the integration and e2e tiers use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.backend import (
    KAFKA_IMAGE,
    MONGO_IMAGE,
    QDRANT_IMAGE,
    Backend,
    BackendChoiceError,
    select_backend,
)
from tests.support.docker_probe import docker_answers

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
EXTERNAL = {"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:9092", "MONGODB_URI": "mongodb://127.0.0.1/"}


class FakeDocker:
    """A probe with a fixed answer that counts how often it was asked."""

    def __init__(self, answers: bool) -> None:
        self.answers = answers
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.answers


def choose(env: dict[str, str], docker: bool) -> Backend:
    return select_backend(env, FakeDocker(docker))


@pytest.mark.parametrize("unset", [{}, {"ENGRAM_TEST_BACKEND": ""}, {"ENGRAM_TEST_BACKEND": " "}])
def test_unset_means_containers_when_docker_answers_else_local(unset: dict[str, str]) -> None:
    assert choose(unset, docker=True) == "containers"
    assert choose(unset, docker=False) == "local"


@pytest.mark.parametrize("docker", [True, False])
def test_local_is_local_and_never_asks_docker(docker: bool) -> None:
    probe = FakeDocker(docker)
    assert select_backend({"ENGRAM_TEST_BACKEND": "local"}, probe) == "local"
    assert probe.asked == 0


def test_containers_with_docker_answering() -> None:
    assert choose({"ENGRAM_TEST_BACKEND": "containers"}, docker=True) == "containers"


def test_containers_without_docker_is_an_error_saying_what_to_do() -> None:
    with pytest.raises(BackendChoiceError) as refused:
        choose({"ENGRAM_TEST_BACKEND": "containers"}, docker=False)
    message = str(refused.value)
    assert "no Docker engine answers" in message
    assert "start Docker" in message and "ENGRAM_TEST_BACKEND=local" in message


@pytest.mark.parametrize("value", ["Containers", " LOCAL "])
def test_case_and_spaces_do_not_matter(value: str) -> None:
    assert choose({"ENGRAM_TEST_BACKEND": value}, docker=True) == value.strip().lower()


@pytest.mark.parametrize("value", ["docker", "external", "ferretdb", "containers,local"])
@pytest.mark.parametrize("env", [{}, EXTERNAL])
def test_any_other_value_is_an_error_naming_the_allowed_ones(
    value: str, env: dict[str, str]
) -> None:
    probe = FakeDocker(True)
    with pytest.raises(BackendChoiceError) as refused:
        select_backend({**env, "ENGRAM_TEST_BACKEND": value}, probe)
    message = str(refused.value)
    assert repr(value) in message and "containers, local" in message and "unset" in message
    assert probe.asked == 0


@pytest.mark.parametrize("docker", [True, False])
def test_external_servers_come_first_and_docker_is_not_asked(docker: bool) -> None:
    probe = FakeDocker(docker)
    assert select_backend(EXTERNAL, probe) == "external"
    assert select_backend({**EXTERNAL, "ENGRAM_TEST_BACKEND": ""}, probe) == "external"
    assert probe.asked == 0


@pytest.mark.parametrize("wanted", ["containers", "local"])
def test_a_backend_named_beside_external_servers_is_an_error(wanted: str) -> None:
    with pytest.raises(BackendChoiceError) as refused:
        choose({**EXTERNAL, "ENGRAM_TEST_BACKEND": wanted}, docker=True)
    message = str(refused.value)
    assert f"ENGRAM_TEST_BACKEND={wanted}" in message
    assert "unset ENGRAM_TEST_BACKEND to use those servers" in message
    assert f"unset KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI to use {wanted}" in message


@pytest.mark.parametrize("one", ["KAFKA_BOOTSTRAP_SERVERS", "MONGODB_URI"])
@pytest.mark.parametrize(
    ("wanted", "docker", "expected"),
    [("", True, "containers"), ("", False, "local"), ("containers", True, "containers")],
)
def test_one_external_server_is_not_external_servers(
    one: str, wanted: str, docker: bool, expected: Backend
) -> None:
    env = {one: EXTERNAL[one], "ENGRAM_TEST_BACKEND": wanted}
    (other,) = set(EXTERNAL) - {one}
    assert choose(env, docker=docker) == expected
    assert choose({**env, other: ""}, docker=docker) == expected


def test_the_containers_run_the_images_docker_compose_runs() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert compose["mongodb"]["image"] == MONGO_IMAGE
    assert compose["kafka"]["image"] == KAFKA_IMAGE
    assert compose["qdrant"]["image"] == QDRANT_IMAGE


def test_without_docker_the_probe_says_no_and_imports_nothing() -> None:
    """The local backend costs no testcontainers or Docker SDK import, and no wait."""
    script = (
        "import sys; from pathlib import Path\n"
        "import tests.conftest\n"
        "from tests.support.docker_probe import docker_answers\n"
        "assert docker_answers({}, Path('/nonexistent/docker.sock')) is False\n"
        "loaded = sorted(m for m in ('docker', 'testcontainers') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, timeout=60)


def test_a_docker_host_that_does_not_answer_is_no_docker() -> None:
    assert docker_answers({"DOCKER_HOST": "unix:///nonexistent/docker.sock"}, timeout=1) is False
