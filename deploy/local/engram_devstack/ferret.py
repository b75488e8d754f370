"""FerretDB v1 with its SQLite backend: a MongoDB wire-protocol server built from the Go proxy."""

import hashlib
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

from engram_devstack.cache import exclusive, require_tool, run_logged
from engram_devstack.errors import InstallError
from engram_devstack.mongo_wire import ping
from engram_devstack.paths import Layout
from engram_devstack.ports import LOCALHOST
from engram_devstack.server import InstallResult, ManagedServer, executable_exists

FERRETDB_VERSION = "1.24.2"
FERRETDB_MODULE = "github.com/FerretDB/FerretDB"
_SOURCE_FILES = ("go.mod", "go.sum", "main.go", "lazylog.go")


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
        for path in [self.source_dir / name for name in _SOURCE_FILES] + self._patches():
            try:
                digest.update(path.read_bytes())
            except OSError as error:
                raise InstallError(f"FerretDB launcher source missing: {error}") from error
        return digest.hexdigest()[:12]

    def _patches(self) -> list[Path]:
        """Our fixes to FerretDB's source, applied in name order before the build."""
        return sorted((self.source_dir / "patches").glob("*.patch"))

    def ensure_installed(self) -> InstallResult:
        """`go build` our launcher, which embeds FerretDB, into the cache once per source digest."""
        with exclusive(self.install_dir):
            if executable_exists(self.binary):
                return InstallResult(False, f"FerretDB {FERRETDB_VERSION} binary cached")
            go = require_tool("go", "build FerretDB from the Go module proxy")
            self.install_dir.mkdir(parents=True, exist_ok=True)
            launcher = self._patched_tree(go)
            partial = self.install_dir / "engram-ferretdb.partial"
            run_logged(
                [go, "build", "-trimpath", "-buildvcs=false", "-o", str(partial), "."],
                self.install_dir / "go-build.log",
                cwd=launcher,
                what=f"building FerretDB {FERRETDB_VERSION} with Go",
            )
            os.replace(partial, self.binary)
            shutil.rmtree(self.install_dir / "src", ignore_errors=True)
            return InstallResult(
                True, f"built FerretDB {FERRETDB_VERSION} with {len(self._patches())} patch(es)"
            )

    def _patched_tree(self, go: str) -> Path:
        """FerretDB's module source with our patches, and our launcher pointed at it."""
        src = self.install_dir / "src"
        shutil.rmtree(src, ignore_errors=True)
        module = src / "ferretdb"
        shutil.copytree(self._module_dir(go), module)
        for path in module.rglob("*"):
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        module.chmod(module.stat().st_mode | stat.S_IWUSR)
        for patch in self._patches():
            run_logged(
                [
                    require_tool("patch", "patch FerretDB's source"),
                    "-p1",
                    "--forward",
                    "-i",
                    str(patch),
                ],
                self.install_dir / f"{patch.stem}.log",
                cwd=module,
                what=f"applying {patch.name} to FerretDB {FERRETDB_VERSION}",
            )
        launcher = src / "launcher"
        launcher.mkdir()
        for name in _SOURCE_FILES:
            shutil.copyfile(self.source_dir / name, launcher / name)
        with (launcher / "go.mod").open("a") as go_mod:
            go_mod.write(f"\nreplace {FERRETDB_MODULE} => ../ferretdb\n")
        return launcher

    def _module_dir(self, go: str) -> Path:
        """Download FerretDB's module (or find it in Go's module cache) and return its folder."""
        log = self.install_dir / "go-mod-download.log"
        result = subprocess.run(
            [go, "mod", "download", "-json", f"{FERRETDB_MODULE}@v{FERRETDB_VERSION}"],
            cwd=self.source_dir,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        log.write_text(result.stdout + result.stderr)
        try:
            folder = Path(json.loads(result.stdout)["Dir"])
        except (ValueError, KeyError) as error:
            raise InstallError(
                f"could not download {FERRETDB_MODULE}@v{FERRETDB_VERSION} with Go; see {log}"
            ) from error
        if result.returncode != 0 or not folder.is_dir():
            raise InstallError(f"Go module download failed; see {log}")
        return folder

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
