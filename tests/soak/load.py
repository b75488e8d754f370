"""The soak's mixed workload: steady rates of real API calls, each timed by its route."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.chaos import drop_file
from tests.support.platform import Platform

CITIES = ["Riga", "Oslo", "Tallinn", "Gdansk", "Vilnius", "Turku", "Tartu", "Bergen"]
TOPICS = ["invoice disputes", "delivery windows", "fleet maintenance", "customs paperwork"]


@dataclass(frozen=True)
class Rates:
    """Calls per second of each kind, and the period of the slower ones."""

    documents: float = 1.0
    memories: float = 10.0
    recalls: float = 10.0
    searches: float = 2.0
    reads: float = 4.0
    drop_every: float = 15.0
    prune_every: float = 60.0


@dataclass
class Call:
    """One timed request."""

    at: float
    route: str
    status: int
    seconds: float


@dataclass
class Load:
    """Runs every kind of call at its rate for a while; keeps each call's route and timing."""

    platform: Platform
    key: str
    rates: Rates
    seed: int = 7
    calls: list[Call] = field(default_factory=list)
    prunes: list[dict[str, Any]] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    started: float = 0.0

    async def run(self, seconds: float) -> None:
        """All loops side by side until the time is up."""
        self.started = time.monotonic()
        rng = random.Random(self.seed)
        async with httpx.AsyncClient(
            base_url=self.platform.url,
            headers={"Authorization": f"Bearer {self.key}"},
            timeout=30.0,
        ) as client:
            agents = [await self._agent(client, f"soak-agent-{i}") for i in range(4)]
            stop_at = self.started + seconds
            loops = [
                self._every(1 / self.rates.documents, stop_at, lambda: self._upload(client, rng)),
                self._every(
                    1 / self.rates.memories, stop_at, lambda: self._remember(client, rng, agents)
                ),
                self._every(
                    1 / self.rates.recalls, stop_at, lambda: self._recall(client, rng, agents)
                ),
                self._every(1 / self.rates.searches, stop_at, lambda: self._search(client, rng)),
                self._every(1 / self.rates.reads, stop_at, lambda: self._read(client, rng)),
                self._every(self.rates.drop_every, stop_at, lambda: self._drop(rng)),
                self._every(self.rates.prune_every, stop_at, lambda: self._prune(client)),
                self._progress(stop_at),
            ]
            await asyncio.gather(*loops)

    async def _every(
        self, period: float, stop_at: float, action: Callable[[], Coroutine[Any, Any, None]]
    ) -> None:
        """Start `action` every `period` seconds (not waiting for the last one: an open loop)."""
        pending: set[asyncio.Task[None]] = set()
        next_at = time.monotonic() + period
        while next_at < stop_at:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            task = asyncio.create_task(action())
            pending.add(task)
            task.add_done_callback(pending.discard)
            next_at += period
        await asyncio.gather(*pending, return_exceptions=True)

    async def _progress(self, stop_at: float) -> None:
        """A line a minute, so a long run shows it is alive."""
        while time.monotonic() < stop_at - 1:
            await asyncio.sleep(min(60.0, max(0.0, stop_at - time.monotonic())))
            done = len(self.calls)
            errors = sum(1 for c in self.calls if c.status >= 500 or c.status == 0)
            minute = (time.monotonic() - self.started) / 60
            print(f"[soak] {minute:5.1f} min: {done} calls, {errors} errors", flush=True)

    async def _call(
        self, client: httpx.AsyncClient, route: str, method: str, url: str, **kw: Any
    ) -> httpx.Response | None:
        """One request, timed and kept under its route template; transport errors count as 0."""
        began = time.monotonic()
        try:
            response = await client.request(method, url, **kw)
        except httpx.HTTPError as exc:
            self.calls.append(Call(began - self.started, route, 0, time.monotonic() - began))
            self.failures.append(f"{route}: {type(exc).__name__}")
            return None
        self.calls.append(
            Call(began - self.started, route, response.status_code, time.monotonic() - began)
        )
        if response.status_code >= 400:
            self.failures.append(f"{route}: {response.status_code} {response.text[:200]}")
        return response

    async def _agent(self, client: httpx.AsyncClient, name: str) -> str:
        response = await client.post("/v1/agents", json={"name": name})
        response.raise_for_status()
        return str(response.json()["agent_id"])

    async def _upload(self, client: httpx.AsyncClient, rng: random.Random) -> None:
        n = len(self.documents)
        rows = [
            f"c{rng.randrange(400)},Carrier {i},{rng.choice(CITIES)},{rng.randrange(1, 90)}"
            for i in range(20)
        ]
        text = "id,name,city,fleet_size\n" + "\n".join(rows) + "\n"
        response = await self._call(
            client,
            "POST /v1/documents",
            "POST",
            "/v1/documents",
            json={"name": f"soak-{n}.csv", "mime": "text/csv", "text": text},
        )
        if response is not None and response.status_code == 202:
            self.documents.append(response.json()["document_id"])

    async def _remember(
        self, client: httpx.AsyncClient, rng: random.Random, agents: list[str]
    ) -> None:
        agent = rng.choice(agents)
        content = f"Call about {rng.choice(TOPICS)} with carrier c{rng.randrange(400)}"
        await self._call(
            client,
            "POST /v1/agents/{id}/memories",
            "POST",
            f"/v1/agents/{agent}/memories",
            json={"content": content, "type": "conversation"},
        )

    async def _recall(
        self, client: httpx.AsyncClient, rng: random.Random, agents: list[str]
    ) -> None:
        agent = rng.choice(agents)
        await self._call(
            client,
            "POST /v1/agents/{id}/recall",
            "POST",
            f"/v1/agents/{agent}/recall",
            json={"query": f"what did we discuss about {rng.choice(TOPICS)}", "top_k": 5},
        )

    async def _search(self, client: httpx.AsyncClient, rng: random.Random) -> None:
        await self._call(
            client,
            "POST /v1/knowledge/search",
            "POST",
            "/v1/knowledge/search",
            json={"query": f"carriers based in {rng.choice(CITIES)}", "top_k": 5},
        )

    async def _read(self, client: httpx.AsyncClient, rng: random.Random) -> None:
        if self.documents and rng.random() < 0.5:
            document = rng.choice(self.documents[-50:])
            await self._call(client, "GET /v1/documents/{id}", "GET", f"/v1/documents/{document}")
        else:
            await self._call(client, "GET /v1/records", "GET", "/v1/records", params={"limit": 20})

    async def _drop(self, rng: random.Random) -> None:
        folder = self._inbox()
        if folder is None:
            return
        n = int(time.monotonic() * 1000)
        rows = [f"d{rng.randrange(400)},Depot {i},{rng.choice(CITIES)},1" for i in range(10)]
        drop_file(folder, f"drop-{n}.csv", "id,name,city,fleet_size\n" + "\n".join(rows) + "\n")

    def _inbox(self) -> Path | None:
        """The tenant's drop folder (the connector creates it per tenant)."""
        folders = [p for p in self.platform.drop_root.iterdir() if p.is_dir()]
        return folders[0] if folders else None

    async def _prune(self, client: httpx.AsyncClient, timeout: float = 300.0) -> None:
        """Delete the oldest remaining uploaded document and follow its job to the end."""
        if len(self.documents) < 5:
            return
        document = self.documents.pop(0)
        began = time.monotonic()
        response = await self._call(
            client, "DELETE /v1/documents/{id}", "DELETE", f"/v1/documents/{document}"
        )
        if response is None or response.status_code != 202:
            return
        job: dict[str, Any] = {"job_id": response.json()["prune_job_id"], "document": document}
        self.prunes.append(job)
        while time.monotonic() - began < timeout:
            await asyncio.sleep(0.5)
            polled = await self._call(
                client, "GET /v1/prune-jobs/{id}", "GET", f"/v1/prune-jobs/{job['job_id']}"
            )
            body = polled.json() if polled is not None and polled.is_success else {}
            if body.get("status") == "completed":
                job["verified_empty"] = body.get("verified_empty")
                job["seconds"] = round(time.monotonic() - began, 2)
                return
