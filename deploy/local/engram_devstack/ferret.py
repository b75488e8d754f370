"""FerretDB v1 with its SQLite backend: a MongoDB wire-protocol server built from the Go proxy."""

import hashlib
import os
from pathlib import Path

from engram_devstack.cache import exclusive, require_tool, run_logged
from engram_devstack.errors import InstallError
from engram_devstack.mongo_wire import ping
from engram_devstack.paths import Layout
from engram_devstack.ports import LOCALHOST
from engram_devstack.server import InstallResult, ManagedServer, executable_exists

FERRETDB_VERSION = "1.24.2"
_SOURCE_FILES = ("go.mod", "go.sum", "main.go")


class FerretServer(ManagedServer):
    """One FerretDB process; its SQLite files live under state_dir/ferretdb."""

    name = "ferretdb"

    def __init__(
        self,
        state_dir: Path,
        port: int = 27017,
        *,
        host: str = LOCALHOST,
        cache_dir: Path | None = None,
        log_dir: Path | None = None,
        source_dir: Path | None = None,
        log_level: str = "warn",
    ) -> None:
        super().__init__(state_dir, port, host=host, cache_dir=cache_dir, log_dir=log_dir)
        self.source_dir = Path(source_dir or Layout.discover().ferretdb_source).resolve()
        self.log_level = log_level

    @property
    def uri(self) -> str:
        return f"mongodb://{self.address}/"

    @property
    def install_dir(self) -> Path:
        """Keyed by the FerretDB version and a digest of our sources, so an edit rebuilds."""
        return self.cache_dir / f"ferretdb-{FERRETDB_VERSION}-{self._source_digest()}"

    @property
    def binary(self) -> Path:
        return self.install_dir / "engram-ferretdb"

    @property
    def _data_dir(self) -> Path:
        return self.state_dir / "ferretdb"

    def _source_digest(self) -> str:
        digest = hashlib.sha256()
        for name in _SOURCE_FILES:
            try:
                digest.update((self.source_dir / name).read_bytes())
            except OSError as error:
                raise InstallError(f"FerretDB launcher source missing: {error}") from error
        return digest.hexdigest()[:12]

    def ensure_installed(self) -> InstallResult:
        """`go build` our launcher, which embeds FerretDB, into the cache once per source digest."""
        with exclusive(self.install_dir):
            if executable_exists(self.binary):
                return InstallResult(False, f"FerretDB {FERRETDB_VERSION} binary cached")
            go = require_tool("go", "build FerretDB from the Go module proxy")
            self.install_dir.mkdir(parents=True, exist_ok=True)
            partial = self.install_dir / "engram-ferretdb.partial"
            run_logged(
                [go, "build", "-trimpath", "-buildvcs=false", "-o", str(partial), "."],
                self.install_dir / "go-build.log",
                cwd=self.source_dir,
                what=f"building FerretDB {FERRETDB_VERSION} with Go",
            )
            os.replace(partial, self.binary)
            return InstallResult(True, f"built FerretDB {FERRETDB_VERSION}")

    def _marker(self) -> str:
        return str(self._data_dir)

    def _command(self) -> list[str]:
        return [
            str(self.binary),
            "-listen",
            self.address,
            "-data",
            str(self._data_dir),
            "-log-level",
            self.log_level,
        ]

    def _prepare(self) -> None:
        if not executable_exists(self.binary):
            raise InstallError("FerretDB is not built yet: call ensure_installed() first")
        self._data_dir.mkdir(parents=True, exist_ok=True)

    def _probe(self) -> None:
        ping(self.host, self.port)
