"""`curl -F file=@suppliers.csv` works: the part's octet-stream type yields to the extension."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
import pytest

from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant


@pytest.fixture
async def api(service: Callable[..., ServiceProcess]) -> AsyncIterator[httpx.AsyncClient]:
    """A new tenant's client of a gateway of its own."""
    gateway = service("gateway")
    headers = {"Authorization": f"Bearer {create_tenant(gateway.env)}"}
    async with httpx.AsyncClient(base_url=gateway.url, headers=headers, timeout=30) as client:
        yield client


async def test_an_octet_stream_part_is_typed_by_its_extension(api: httpx.AsyncClient) -> None:
    csv = b"id,name\ns-1,Supplier One\n"
    sent = await api.post(
        "/v1/documents", files={"file": ("suppliers.csv", csv, "application/octet-stream")}
    )
    assert sent.status_code == 202, sent.text
    refused = await api.post(
        "/v1/documents",
        files={"file": ("photo.jpeg", b"not a photo", "application/octet-stream")},
    )
    assert refused.status_code == 415, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    problem = refused.json()
    assert "photo.jpeg" in problem["detail"] and "text/csv" in problem["detail"]


async def test_a_source_label_is_refused_not_dropped(api: httpx.AsyncClient) -> None:
    body = {"name": "a.txt", "mime": "text/plain", "text": "id: 1\n", "source": "crm"}
    refused = await api.post("/v1/documents", json=body)
    assert refused.status_code == 422, refused.text
    assert [e["loc"] for e in refused.json()["errors"]] == [["source"]]
