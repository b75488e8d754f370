"""`curl -F file=@suppliers.csv` works: the part's octet-stream type yields to the extension."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.support.services import ServiceProcess
from tests.support.tenants import create_tenant


async def test_an_octet_stream_part_is_typed_by_its_extension(
    service: Callable[..., ServiceProcess],
) -> None:
    gateway = service("gateway")
    key = create_tenant(gateway.env)
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        csv = b"id,name\ns-1,Supplier One\n"
        sent = await client.post(
            "/v1/documents",
            files={"file": ("suppliers.csv", csv, "application/octet-stream")},
        )
        assert sent.status_code == 202, sent.text
        refused = await client.post(
            "/v1/documents",
            files={"file": ("photo.jpeg", b"not a photo", "application/octet-stream")},
        )
        assert refused.status_code == 415, refused.text
        problem = refused.json()
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert "photo.jpeg" in problem["detail"] and "text/csv" in problem["detail"]


async def test_a_source_label_is_refused_not_dropped(
    service: Callable[..., ServiceProcess],
) -> None:
    gateway = service("gateway")
    key = create_tenant(gateway.env)
    async with httpx.AsyncClient(
        base_url=gateway.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as client:
        body = {"name": "a.txt", "mime": "text/plain", "text": "id: 1\n", "source": "crm"}
        refused = await client.post("/v1/documents", json=body)
        assert refused.status_code == 422, refused.text
        assert [e["loc"] for e in refused.json()["errors"]] == [["source"]]
