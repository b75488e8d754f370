"""One FastAPI app shape for every service: lifespan-built clients, health, problems, tracing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any, Protocol

from fastapi import APIRouter, Depends, FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from engram_platform.gc_tuning import tune_after_start
from engram_platform.http import health_router
from engram_platform.indexes import Expiry, sweep
from engram_platform.kafka_security import (
    LOGIN_ADVICE,
    KafkaLoginRefused,
    check_kafka_login,
    kafka_security_options,
)
from engram_platform.lean_routes import LeanRoute, LeanRoutes
from engram_platform.problems import install_problem_handlers
from engram_platform.query_params import refuse_undeclared_query
from engram_platform.runtime import ConnectedRuntime, Runtime
from engram_platform.topics import ensure_topics

log = logging.getLogger(__name__)

Register = Callable[[ConnectedRuntime, FastAPI], Awaitable[None]]
Background = Callable[[], Coroutine[Any, Any, None]]


async def _with_backoff(
    what: str, action: Callable[[], Awaitable[object]], attempts: int = 30
) -> None:
    """Start-up waits for Kafka/Mongo to come up instead of dying on the first refusal; a
    refused login stops it at once."""
    delay = 0.5
    for attempt in range(1, attempts + 1):
        try:
            await action()
            return
        except KafkaLoginRefused:
            raise
        except Exception as exc:
            if attempt == attempts:
                raise
            log.warning(
                "waiting for dependency",
                extra={"dependency": what, "attempt": attempt, "error_type": type(exc).__name__},
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


async def _cancel(tasks: Sequence[asyncio.Task[None]]) -> None:
    """Stop background loops and wait for them, so none outlives the clients it uses."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def service_app(
    runtime: Runtime,
    *,
    title: str,
    register: Register,
    routers: Sequence[APIRouter] = (),
    background: Sequence[Background] = (),
    lean_routes: Sequence[LeanRoute] = (),
) -> FastAPI:
    """Build the app; `register` wires stores and handlers once Mongo is connected.

    `background` loops (watchers, pollers) start once the broker is up and are cancelled
    before it stops. Every route refuses query parameters it does not declare (422), before
    its own dependencies run (see `query_params`). Slashes are never redirected (Starlette
    builds that redirect from the Host header): a trailing slash is a 404 problem.
    `lean_routes` answer the hot internal reads they pass before FastAPI (`lean_routes`).
    """

    connected: list[ConnectedRuntime] = []

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with runtime.connected() as rt:
            settings = rt.settings
            expiries: list[Expiry] = []

            async def create_indexes() -> None:
                expiries[:] = await rt.ensure_indexes()

            await _with_backoff("mongodb-indexes", create_indexes)
            try:
                await _with_backoff("kafka-login", lambda: check_kafka_login(settings))
            except KafkaLoginRefused as refused:
                log.error(
                    f"Kafka refused the {refused.mechanism} login: {LOGIN_ADVICE}",
                    extra={
                        "kafka_server": refused.server,
                        "kafka_sasl_username": refused.username,
                        "broker_reason": refused.reason,
                    },
                )
                raise
            await _with_backoff(
                "kafka-topics",
                lambda: ensure_topics(
                    settings.kafka_bootstrap_servers,
                    prefix=settings.topic_prefix,
                    partitions=settings.topic_partitions,
                    security=kafka_security_options(settings),
                ),
            )
            await register(rt, app)
            if rt.consumer.topics:
                rt.consumer.subscribe()
            await _with_backoff("kafka", rt.broker.start)
            if rt.consumer.topics:
                await _with_backoff("mongodb-parked", rt.consumer.start)
            if settings.outbox_relay:
                rt.start_relay()
            connected.append(rt)
            thresholds = tune_after_start(settings.gc_young_threshold)
            log.info("started", extra={"gc_thresholds": list(thresholds)})
            if app.state.internal_token is None and _serves_internal_routes(routers):
                log.warning("ENGRAM_INTERNAL_TOKEN is not set: every internal call is refused")
            tasks = [asyncio.create_task(loop()) for loop in background]
            if expiries:
                tasks.append(asyncio.create_task(sweep(rt.db, expiries)))
            if rt.consumer.topics and settings.metrics_enabled:
                tasks.append(asyncio.create_task(rt.lag_sampler().run()))
            try:
                yield
            finally:
                connected.clear()
                await _cancel(tasks)
                await rt.consumer.stop()
                await rt.consumer.drain()
                await rt.broker.stop()

    async def ready() -> dict[str, bool]:
        """Not ready until connected; then each dependency answering now."""
        if not connected:
            return {"mongodb": False, "kafka": False}
        return await connected[0].ready()

    app = ServiceApp(
        title=title,
        lifespan=lifespan,
        redirect_slashes=False,
        dependencies=[Depends(refuse_undeclared_query)],
        telemetry={
            "tracer_provider": runtime.tracer_provider,
            "meter_provider": runtime.meter_provider,
            "metrics": runtime.meter_provider is not None,
            "logs": False,
            "operation_spans": False,
        },
    )
    token = runtime.settings.internal_token
    app.state.internal_token = token.get_secret_value() if token else None
    install_problem_handlers(app)
    if lean_routes:
        app.lean = LeanRoutes(lean_routes, runtime.tracer_provider, runtime.meter_provider)
    app.include_router(health_router(runtime.service, ready))
    for router in routers:
        app.include_router(router)
    return app


class LeanLayer(Protocol):
    """Answers the requests it serves before FastAPI and hands every other to `app`."""

    async def __call__(
        self, scope: Scope, receive: Receive, send: Send, app: ASGIApp, state: Any
    ) -> None: ...


class ServiceApp(FastAPI):
    """A service's app: its lean layer (`lean_routes`, or one a service sets) answers the
    requests it serves, FastAPI every other request."""

    lean: LeanLayer | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.lean is None:
            await super().__call__(scope, receive, send)
        else:
            await self.lean(scope, receive, send, super().__call__, self.state)


def _serves_internal_routes(routers: Sequence[APIRouter]) -> bool:
    """Whether the gateway calls this app (so an unset token will break its reads)."""
    return any(
        getattr(route, "path", "").startswith("/internal/")
        for router in routers
        for route in router.routes
    )
