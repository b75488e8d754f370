"""Drive is off unless configured, and both credential kinds build without any network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from engram_connectors.adapters.drive_api import (
    SCOPES,
    GoogleDriveApi,
    credentials_from,
    drive_discovery,
)
from engram_connectors.config import ConnectorsSettings

pytestmark = pytest.mark.unit


def test_drive_needs_a_tenant_and_a_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GDRIVE_TENANT_ID", "GDRIVE_OAUTH_TOKEN", "GDRIVE_SERVICE_ACCOUNT_FILE"):
        monkeypatch.delenv(f"ENGRAM_CONNECTORS_{name}", raising=False)
    assert not ConnectorsSettings().drive_enabled
    assert not ConnectorsSettings(gdrive_tenant_id="t1").drive_enabled
    assert not ConnectorsSettings(gdrive_oauth_token="tok").drive_enabled
    assert ConnectorsSettings(gdrive_tenant_id="t1", gdrive_oauth_token="tok").drive_enabled


def test_the_token_never_shows_in_the_settings_repr() -> None:
    settings = ConnectorsSettings(gdrive_tenant_id="t1", gdrive_oauth_token="very-secret")
    assert "very-secret" not in repr(settings)


def test_drop_tenants_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_CONNECTORS_DROP_TENANTS", "tnt_a, tnt_b")
    assert ConnectorsSettings().drop_tenants == frozenset({"tnt_a", "tnt_b"})


def test_a_service_account_file_gives_read_only_drive_credentials(tmp_path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    account = {
        "type": "service_account",
        "project_id": "engram-test",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": "connector@engram-test.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": "http://127.0.0.1:9/token",
    }
    path = tmp_path / "sa.json"
    path.write_text(json.dumps(account))
    credentials = credentials_from(path, None)
    assert credentials.scopes == SCOPES  # type: ignore[attr-defined]


def test_no_credential_is_refused() -> None:
    with pytest.raises(ValueError):
        credentials_from(None, None)


def test_the_client_is_built_from_the_bundled_discovery_and_points_at_the_root_url() -> None:
    assert drive_discovery()["version"] == "v3"
    api = GoogleDriveApi(credentials_from(None, "tok"), root_url="http://127.0.0.1:1")
    request = api.service.files().get_media(fileId="f1")
    assert request.uri.startswith("http://127.0.0.1:1/drive/v3/files/f1?")
    assert "alt=media" in request.uri
