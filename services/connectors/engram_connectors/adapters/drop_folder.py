"""The drop folder on disk: scanning without following links, reading safely, moving out."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from engram_connectors.domain.paths import ERROR_SUFFIX, RESERVED, is_ignored_name, is_within
from engram_connectors.domain.stability import Observation
from engram_events.ids import Id

MAX_DEPTH = 8
_TENANT_ID: TypeAdapter[str] = TypeAdapter(Id)


class DropRoot:
    """`<root>/<tenant_id>/`: every sub-folder named by a valid tenant id is that tenant's inbox."""

    def __init__(self, root: Path, allowed_tenants: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.allowed = allowed_tenants

    def folders(self) -> list[TenantFolder]:
        """The tenants' folders present now; symlinked folders are never followed."""
        if not self.root.is_dir():
            return []
        found = []
        with os.scandir(self.root) as entries:
            for entry in entries:
                if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
                    continue
                if not _valid_tenant(entry.name) or (
                    self.allowed and entry.name not in self.allowed
                ):
                    continue
                found.append(TenantFolder(entry.name, Path(entry.path)))
        return sorted(found, key=lambda folder: folder.tenant_id)


def _valid_tenant(name: str) -> bool:
    """Folder names that are usable tenant ids (no hidden or odd names)."""
    try:
        _TENANT_ID.validate_python(name)
    except ValidationError:
        return False
    return True


class TenantFolder:
    """One tenant's inbox, with its `processed/` and `failed/` sub-folders."""

    def __init__(self, tenant_id: str, path: Path) -> None:
        self.tenant_id = tenant_id
        self.path = path

    def scan(self) -> dict[str, Observation]:
        """Regular files under the inbox by relative path; links and reserved folders skipped."""
        found: dict[str, Observation] = {}
        self._scan_dir(self.path, "", 0, found)
        return found

    def _scan_dir(
        self, directory: Path, prefix: str, depth: int, found: dict[str, Observation]
    ) -> None:
        """Walk one level; never descend through a symlink or past MAX_DEPTH."""
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            relative = f"{prefix}{entry.name}"
            if entry.is_symlink() or is_ignored_name(entry.name):
                continue
            if depth == 0 and entry.name in RESERVED:
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH:
                    self._scan_dir(Path(entry.path), f"{relative}/", depth + 1, found)
            elif entry.is_file(follow_symlinks=False):
                info = entry.stat(follow_symlinks=False)
                found[relative] = Observation(info.st_size, info.st_mtime_ns)

    def read(self, relative: str, seen: Observation, limit: int) -> bytes | None:
        """Up to `limit` bytes of a file still as scanned; None when it changed, moved or is a link."""
        path = self.path / relative
        if not is_within(os.path.realpath(self.path), os.path.realpath(path.parent) + "/"):
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            if Observation(info.st_size, info.st_mtime_ns) != seen:
                return None
            return handle.read(limit)

    def move_processed(self, relative: str, version: str) -> Path:
        """Move an accepted file under `processed/`, never overwriting an earlier one."""
        return self._move(relative, self.path / "processed" / relative, version)

    def move_failed(self, relative: str, error: dict[str, Any]) -> Path:
        """Move a refused file under `failed/` with `<name>.error.json` beside it."""
        target = _free_target(self.path / "failed" / relative, _stamp())
        target.parent.mkdir(parents=True, exist_ok=True)
        report = target.with_name(target.name + ERROR_SUFFIX)
        partial = report.with_name(f".{report.name}.tmp")
        partial.write_text(json.dumps(error, indent=2, sort_keys=True))
        os.replace(partial, report)
        os.rename(self.path / relative, target)
        return target

    def _move(self, relative: str, wanted: Path, tag: str) -> Path:
        """Rename within the inbox's file system to a target that does not exist yet."""
        target = _free_target(wanted, tag)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.path / relative, target)
        return target


def _free_target(wanted: Path, tag: str) -> Path:
    """`wanted`, or `<stem>.<tag>[.<n>]<suffix>` when a file of that name is already there."""
    if not wanted.exists():
        return wanted
    for attempt in range(1000):
        extra = f".{tag}" if attempt == 0 else f".{tag}.{attempt}"
        candidate = wanted.with_name(f"{wanted.stem}{extra}{wanted.suffix}")
        if not candidate.exists():
            return candidate
    raise FileExistsError("no free name for the moved file")


def _stamp() -> str:
    """A compact UTC timestamp, to keep repeated failures of one name apart."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
