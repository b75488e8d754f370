"""One kept-alive httpx client per API key, built on first use.

`clients.setdefault(key, httpx.Client(...))` builds a client on every call, even when the key has
one: ~25 ms of CPU each (its TLS context) between the requests a bench times, on the same two
cores as the services it measures. The gateway's recall looked ~2 ms slower than it is.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

Build = Callable[[str], httpx.Client]


def bearer_client(base_url: str) -> Build:
    """Clients of `base_url` sending `Authorization: Bearer <key>`."""

    def build(key: str) -> httpx.Client:
        return httpx.Client(
            base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
        )

    return build


class KeyClients:
    """A client per key, kept until `close`."""

    def __init__(self, build: Build) -> None:
        self._build = build
        self._clients: dict[str, httpx.Client] = {}

    def __call__(self, key: str) -> httpx.Client:
        """The key's client, built the first time the key is seen."""
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = self._build(key)
        return client

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
