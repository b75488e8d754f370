"""Google Drive v3 through the official client library, built from the bundled discovery document."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path
from typing import Any

import google_auth_httplib2
import httplib2
from google.auth.credentials import Credentials
from googleapiclient.discovery import build_from_document
from googleapiclient.errors import HttpError

from engram_connectors.domain.drive import Change, ChangesPage, DriveFile, ItemUnavailable

SCOPES = ["https://www.googleapis.com/auth/drive.readonly"]
FILE_FIELDS = "id,name,mimeType,md5Checksum,version,modifiedTime,trashed,size"
CHANGE_FIELDS = "nextPageToken,newStartPageToken,changes(changeType,fileId,removed,time)"
RATE_LIMIT_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})


def drive_discovery() -> dict[str, Any]:
    """Drive v3's discovery document as shipped inside google-api-python-client (no network)."""
    documents = resources.files("googleapiclient") / "discovery_cache" / "documents"
    loaded: dict[str, Any] = json.loads((documents / "drive.v3.json").read_text())
    return loaded


def credentials_from(service_account_file: Path | None, oauth_token: str | None) -> Credentials:
    """A service account (read-only Drive scope) or a static OAuth access token."""
    if service_account_file is not None:
        from google.oauth2 import service_account

        sa: Credentials = service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
            str(service_account_file), scopes=SCOPES
        )
        return sa
    if oauth_token:
        from google.oauth2.credentials import Credentials as OAuthCredentials

        return OAuthCredentials(token=oauth_token)  # type: ignore[no-untyped-call]
    raise ValueError("Drive needs a service-account file or an OAuth token")


class GoogleDriveApi:
    """Blocking client calls run in a worker thread, one at a time (httplib2 is not thread-safe)."""

    def __init__(
        self,
        credentials: Credentials,
        *,
        root_url: str,
        timeout: float = 30.0,
        num_retries: int = 2,
    ) -> None:
        http = google_auth_httplib2.AuthorizedHttp(credentials, http=httplib2.Http(timeout=timeout))
        endpoint = root_url.rstrip("/") + "/drive/v3/"
        self.service = build_from_document(
            drive_discovery(), http=http, client_options={"api_endpoint": endpoint}
        )
        self.num_retries = num_retries
        self._lock = asyncio.Lock()

    async def _run(self, request: Any) -> Any:
        """Execute one request off the event loop, retrying 5xx/429/rate-limit 403 in the library."""
        async with self._lock:
            return await asyncio.to_thread(request.execute, num_retries=self.num_retries)

    async def start_page_token(self) -> str:
        """Where the feed starts for a new connection: changes made from now on."""
        answer = await self._run(self.service.changes().getStartPageToken(supportsAllDrives=True))
        return str(answer["startPageToken"])

    async def changes(self, page_token: str, page_size: int) -> ChangesPage:
        """One page of changes, removals included."""
        answer = await self._run(
            self.service.changes().list(
                pageToken=page_token,
                pageSize=page_size,
                includeRemoved=True,
                includeItemsFromAllDrives=True,
                supportsAllDrives=True,
                spaces="drive",
                fields=CHANGE_FIELDS,
            )
        )
        changes = [
            Change(
                file_id=str(c["fileId"]),
                removed=bool(c.get("removed")),
                time=str(c.get("time", "")),
            )
            for c in answer.get("changes", [])
            if c.get("changeType", "file") == "file" and c.get("fileId")
        ]
        return ChangesPage(changes, answer.get("nextPageToken"), answer.get("newStartPageToken"))

    async def file(self, file_id: str) -> DriveFile:
        """Current metadata; 403/404 become ItemUnavailable."""
        answer = await self._guarded(
            self.service.files().get(fileId=file_id, fields=FILE_FIELDS, supportsAllDrives=True)
        )
        size = answer.get("size")
        return DriveFile(
            id=str(answer["id"]),
            name=str(answer.get("name", "")),
            mime_type=str(answer.get("mimeType", "")),
            version=str(answer.get("version", "")),
            modified_time=str(answer.get("modifiedTime", "")),
            trashed=bool(answer.get("trashed", False)),
            md5=answer.get("md5Checksum"),
            size=int(size) if size is not None else None,
        )

    async def download(self, file_id: str) -> bytes:
        """A file's bytes (`files.get` with `alt=media`)."""
        content: bytes = await self._guarded(
            self.service.files().get_media(fileId=file_id, supportsAllDrives=True)
        )
        return content

    async def export(self, file_id: str, mime: str) -> bytes:
        """A Google-native file exported to `mime`."""
        content: bytes = await self._guarded(
            self.service.files().export_media(fileId=file_id, mimeType=mime)
        )
        return content

    async def _guarded(self, request: Any) -> Any:
        """Run a per-file request; only a real 403 (not a rate limit) or 404 means unavailable."""
        try:
            return await self._run(request)
        except HttpError as exc:
            status = int(exc.resp.status)
            if status == 404 or (status == 403 and not _is_rate_limit(exc)):
                raise ItemUnavailable(status) from None
            raise


def _is_rate_limit(exc: HttpError) -> bool:
    """Drive signals quota exhaustion with 403 and a rate-limit reason; that one is transient."""
    try:
        body = json.loads(exc.content.decode("utf-8"))
        reasons = {e.get("reason") for e in body.get("error", {}).get("errors", [])}
    except (ValueError, AttributeError):
        return False
    return bool(reasons & RATE_LIMIT_REASONS)
