"""Headless Chromium opens /ops on a running gateway and ingest, logs in, finds a document's trace.

Needs Debian's `chromium` (`apt-get install -y chromium`) and the `playwright` Python package;
the browser is driven through `executable_path`, so `playwright install` is never needed.
The screenshots land in test-artifacts/.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engram_devstack import free_port
from tests.conftest import ROOT
from tests.integration.ops.support import create_ops_tenant
from tests.support.services import ServiceProcess

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "test-artifacts"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@pytest.fixture
def gateway_and_ingest(
    stack_env: dict[str, str], tmp_path: Path
) -> Iterator[tuple[ServiceProcess, str]]:
    """Ingest and the gateway as real processes, and a key with the ops role."""
    ingest = ServiceProcess("ingest", stack_env, free_port(), tmp_path / "logs")
    gateway = ServiceProcess(
        "gateway", {**stack_env, "ENGRAM_GATEWAY_INGEST_URL": ""}, free_port(), tmp_path / "logs"
    )
    try:
        ingest.start()
        gateway.env["ENGRAM_GATEWAY_INGEST_URL"] = ingest.url
        gateway.start()
        yield gateway, create_ops_tenant(gateway.env)
    finally:
        gateway.stop()
        ingest.stop()


@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium)"
)
async def test_browser_finds_a_documents_trace_on_the_ops_dashboard(
    gateway_and_ingest: tuple[ServiceProcess, str],
) -> None:
    playwright_api = pytest.importorskip("playwright.async_api")
    gateway, key = gateway_and_ingest
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}
    ) as client:
        accepted = await client.post(
            "/v1/documents", json={"name": "carriers.csv", "mime": "text/csv", "text": "id\nc1\n"}
        )
    assert accepted.status_code == 202, accepted.text
    document_id = accepted.json()["document_id"]
    ARTIFACTS.mkdir(exist_ok=True)
    async with playwright_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            problems: list[str] = []
            page.on("pageerror", lambda exc: problems.append(f"javascript: {exc}"))
            page.on(
                "response",
                lambda r: (
                    problems.append(f"{r.status} {r.url}")
                    if r.status >= 500 or (r.status >= 400 and "/ops/static/" in r.url)
                    else None
                ),
            )
            await page.goto(f"{gateway.url}/ops")
            await page.fill("#api-key", key)
            await page.click("#login")
            await page.wait_for_selector("#pipeline svg")
            assert await page.locator(".error").count() == 0
            await page.screenshot(path=str(ARTIFACTS / "ops-dashboard.png"), full_page=True)
            found = False
            for _ in range(40):
                await page.fill("#lookup-id", document_id)
                await page.click("header form.lookup button")
                await page.wait_for_load_state()
                if await page.locator("#trace").count():
                    found = True
                    break
                await page.wait_for_timeout(750)
                await page.goto(f"{gateway.url}/ops")
            assert found, "the document's trace never appeared on the dashboard"
            await page.locator(".span-row", has_text="process document.submitted").first.click()
            await page.screenshot(path=str(ARTIFACTS / "ops-document-trace.png"), full_page=True)
            text = await page.inner_text("#trace")
        finally:
            await browser.close()
    assert "engram-gateway" in text and "ingest" in text
    assert document_id in text, "the trace shows the document id on its spans"
    assert not problems, problems
    assert (ARTIFACTS / "ops-document-trace.png").stat().st_size > 10_000
