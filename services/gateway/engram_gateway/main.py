"""The gateway's composition root: clients are built in the lifespan, nothing at import."""

from __future__ import annotations

from engram_platform.app import service_app
from engram_platform.runtime import Runtime
from fastapi import FastAPI

from engram_gateway.adapters.internal import InternalServices
from engram_gateway.adapters.registry import Registry
from engram_gateway.adapters.submissions import Submissions
from engram_gateway.api import agents, documents
from engram_gateway.config import GatewaySettings

SERVICE = "gateway"


def create_app(settings: GatewaySettings | None = None, *, install_global: bool = True) -> FastAPI:
    """The public HTTP API; tests pass settings with a unique database and topic prefix."""
    settings = settings or GatewaySettings()
    runtime = Runtime.build(SERVICE, settings, install_global=install_global)

    async def register(rt: Runtime, app: FastAPI) -> None:
        app.state.settings = settings
        app.state.registry = Registry(rt.db)
        app.state.submissions = Submissions(rt.db)
        token = settings.internal_token.get_secret_value() if settings.internal_token else None
        app.state.internal = InternalServices(
            {
                "ingest": settings.ingest_url,
                "extraction": settings.extraction_url,
                "memory": settings.memory_url,
                "enrichment": settings.enrichment_url,
            },
            token=token,
            timeout=settings.internal_timeout_seconds,
        )

    app = service_app(
        runtime,
        title="Engram",
        register=register,
        routers=[agents.router, documents.router],
    )
    app.version = "1.0.0"
    return app
