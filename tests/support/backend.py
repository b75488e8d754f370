"""Which servers the integration and e2e tiers run against, decided from the environment alone.

In order:
1. `ENGRAM_TEST_BACKEND` is unset (or empty), `containers` or `local`; anything else is an error.
2. `KAFKA_BOOTSTRAP_SERVERS` and `MONGODB_URI` both set: those servers (`external`), as before
   testcontainers; Docker is not asked. Naming a backend as well is an error, since the servers
   it asks for would not be the ones the tests use.
3. `containers`: MongoDB 8, Apache Kafka and a Qdrant server in Docker (testcontainers); an
   error when no Docker engine answers, never a quiet fall back to the local servers.
4. `local`: our own Kafka and FerretDB (`engram_devstack`), as `make infra` runs them.
5. Unset: `containers` when a Docker engine answers, else `local`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Literal

Backend = Literal["external", "containers", "local"]

BACKEND_VAR = "ENGRAM_TEST_BACKEND"
CHOICES = ("containers", "local")
EXTERNAL_VARS = ("KAFKA_BOOTSTRAP_SERVERS", "MONGODB_URI")

MONGO_IMAGE = "mongo:8.0"
KAFKA_IMAGE = "apache/kafka:4.1.1"
QDRANT_IMAGE = "qdrant/qdrant:v1.19.0"
"""The images docker-compose.yml runs (a unit test keeps them in step)."""


class BackendChoiceError(Exception):
    """The environment asks for servers the tests cannot have; the message says what to change."""


def select_backend(env: Mapping[str, str], docker_answers: Callable[[], bool]) -> Backend:
    """The backend `env` asks for; `docker_answers` is called only when the choice depends on it."""
    wanted = env.get(BACKEND_VAR, "").strip().lower()
    if wanted and wanted not in CHOICES:
        raise BackendChoiceError(
            f"{BACKEND_VAR}={env[BACKEND_VAR]!r}: use one of {', '.join(CHOICES)}, "
            "or leave it unset (containers when Docker answers, else local)"
        )
    if all(env.get(name) for name in EXTERNAL_VARS):
        if wanted:
            external = " and ".join(EXTERNAL_VARS)
            raise BackendChoiceError(
                f"{BACKEND_VAR}={wanted} asks for servers of the tests' own, but {external} "
                f"name external ones: unset {BACKEND_VAR} to use those servers, or unset "
                f"{external} to use {wanted}"
            )
        return "external"
    if wanted == "local":
        return "local"
    if docker_answers():
        return "containers"
    if wanted == "containers":
        raise BackendChoiceError(
            f"{BACKEND_VAR}=containers, but no Docker engine answers (DOCKER_HOST, or the "
            f"default socket): start Docker, or set {BACKEND_VAR}=local to run our own Kafka and "
            "FerretDB instead"
        )
    return "local"
