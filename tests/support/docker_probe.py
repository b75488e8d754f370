"""Whether a Docker engine answers, asked so that machines without one import and wait for nothing."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT_SOCKET = Path("/var/run/docker.sock")


def docker_answers(
    env: Mapping[str, str] = os.environ, socket: Path = DEFAULT_SOCKET, timeout: int = 3
) -> bool:
    """A ping to DOCKER_HOST, else to the default socket; False at once when neither is there."""
    host = env.get("DOCKER_HOST")
    if not host and not socket.exists():
        return False
    import docker  # the SDK testcontainers drives; imported only when there is an engine to ask

    base_url = host or f"unix://{socket}"
    try:
        client = docker.DockerClient(
            base_url=base_url, timeout=timeout, use_ssh_client=base_url.startswith("ssh://")
        )
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (docker.errors.DockerException, OSError):
        return False
