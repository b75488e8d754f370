"""The memory stack under test: embedding, memory and gateway processes on one broker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from tests.support.polling import until
from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant


@dataclass
class MemoryStack:
    """The three processes, the environment they share, and a helper per tenant key."""

    gateway: ServiceProcess
    memory: ServiceProcess
    embedding: ServiceProcess
    env: dict[str, str]

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
        return httpx.Client(base_url=self.gateway.url, headers=headers, timeout=30)

    def tenant(self, name: str = "acme") -> str:
        return create_tenant(self.gateway.env, name)

    def processes(self) -> list[ServiceProcess]:
        return [self.gateway, self.memory, self.embedding]


def wait_status(
    client: httpx.Client, agent_id: str, memory_id: str, wanted: set[str], timeout: float = 60
) -> dict[str, Any]:
    """Poll the status URL until the memory reaches one of `wanted`."""

    def look() -> dict[str, Any] | None:
        response = client.get(f"/v1/agents/{agent_id}/memories/{memory_id}")
        body: dict[str, Any] = response.json()
        return body if response.status_code == 200 and body.get("status") in wanted else None

    found: dict[str, Any] = until(look, f"memory {memory_id} to reach {wanted}", timeout, 0.2)
    return found


def write(client: httpx.Client, agent_id: str, content: str, **fields: Any) -> str:
    """POST a memory and return its id (202 expected)."""
    response = client.post(f"/v1/agents/{agent_id}/memories", json={"content": content, **fields})
    assert response.status_code == 202, response.text
    return str(response.json()["memory_id"])


def new_agent(client: httpx.Client) -> str:
    response = client.post("/v1/agents", json={"name": "agent"})
    assert response.status_code == 201, response.text
    return str(response.json()["agent_id"])


def topic(stack: MemoryStack, base: str) -> str:
    """A topic name under the test's prefix."""
    return f"{stack.env['ENGRAM_TOPIC_PREFIX']}{base}"
