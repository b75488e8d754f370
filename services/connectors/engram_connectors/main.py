"""The connectors' composition root: no consumer, only background watchers."""

from __future__ import annotations

import logging

from fastapi import FastAPI

from engram_connectors.adapters.drive_api import GoogleDriveApi, credentials_from
from engram_connectors.adapters.drop_folder import DropRoot
from engram_connectors.adapters.ledger import MongoDriveState, MongoSubmissionLedger
from engram_connectors.adapters.publisher import KafkaPublisher
from engram_connectors.config import ConnectorsSettings
from engram_connectors.service.filedrop import FileDropWatcher
from engram_connectors.service.gdrive import DrivePoller
from engram_platform.app import Background, service_app
from engram_platform.runtime import ConnectedRuntime, Runtime

SERVICE = "connectors"
log = logging.getLogger(__name__)


def create_app(
    settings: ConnectorsSettings | None = None, *, install_global: bool = True
) -> FastAPI:
    """Watches the drop folder and polls Drive, each only when configured."""
    settings = settings or ConnectorsSettings()
    runtime = Runtime.build(SERVICE, settings, install_global=install_global)
    loops: dict[str, FileDropWatcher | DrivePoller] = {}

    async def register(rt: ConnectedRuntime, app: FastAPI) -> None:
        publisher = KafkaPublisher(rt.broker, settings.topic_prefix)
        if settings.drop_root is not None:
            settings.drop_root.mkdir(parents=True, exist_ok=True)
            loops["file_drop"] = FileDropWatcher(
                DropRoot(settings.drop_root, settings.drop_tenants),
                MongoSubmissionLedger(rt.db),
                publisher,
                max_bytes=settings.drop_max_bytes,
                interval=settings.drop_scan_interval_seconds,
                concurrency=settings.drop_concurrency,
            )
        if settings.drive_enabled:
            assert settings.gdrive_tenant_id is not None
            token = settings.gdrive_oauth_token
            api = GoogleDriveApi(
                credentials_from(
                    settings.gdrive_service_account_file,
                    token.get_secret_value() if token else None,
                ),
                root_url=settings.gdrive_root_url,
                timeout=settings.gdrive_timeout_seconds,
            )
            loops["gdrive"] = DrivePoller(
                api,
                MongoDriveState(rt.db),
                publisher,
                tenant_id=settings.gdrive_tenant_id,
                connection=settings.gdrive_connection,
                page_size=settings.gdrive_page_size,
                interval=settings.gdrive_poll_interval_seconds,
                max_bytes=settings.gdrive_max_bytes,
                start_page_token=settings.gdrive_start_page_token,
            )
        log.info("connectors configured", extra={"enabled": sorted(loops)})

    def loop(name: str) -> Background:
        """A loop that runs only when `register` configured it."""

        async def run() -> None:
            if name in loops:
                await loops[name].run()

        return run

    return service_app(
        runtime,
        title="engram-connectors",
        register=register,
        background=[loop("file_drop"), loop("gdrive")],
    )
