"""A real Apache Kafka broker (KRaft, one node) from Maven Central jars on the machine's Java."""

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from engram_devstack import kafka_config
from engram_devstack.cache import exclusive, require_tool, run_logged
from engram_devstack.errors import InstallError
from engram_devstack.kafka_client import check_kafka
from engram_devstack.ports import LOCALHOST, port_open
from engram_devstack.server import InstallResult, ManagedServer

MINIMUM_JAVA = 17
_COMPLETE_MARKER = ".complete"


class KafkaServer(ManagedServer):
    """One Kafka process acting as broker and controller, its data under state_dir/kafka."""

    name = "kafka"

    def __init__(
        self,
        state_dir: Path,
        port: int = 9092,
        controller_port: int = 9093,
        *,
        host: str = LOCALHOST,
        cache_dir: Path | None = None,
        log_dir: Path | None = None,
        heap_mb: int = 512,
        sasl_port: int | None = None,
        sasl_users: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(state_dir, port, host=host, cache_dir=cache_dir, log_dir=log_dir)
        self.controller_port = controller_port
        self.heap_mb = heap_mb
        self.sasl_port = sasl_port
        self.sasl_users = dict(sasl_users or {})

    @property
    def install_dir(self) -> Path:
        """Keyed by every version that decides which jars are fetched."""
        versions = f"{kafka_config.KAFKA_VERSION}-log4j{kafka_config.LOG4J_VERSION}"
        return self.cache_dir / f"kafka-{versions}"

    @property
    def libs_dir(self) -> Path:
        return self.install_dir / "libs"

    @property
    def bootstrap_servers(self) -> str:
        return self.address

    @property
    def sasl_address(self) -> str | None:
        """host:port of the SASL_PLAINTEXT listener, when it has one."""
        return None if self.sasl_port is None else f"{self.host}:{self.sasl_port}"

    @property
    def _config_dir(self) -> Path:
        return self.state_dir / "kafka" / "config"

    @property
    def _data_dir(self) -> Path:
        return self.state_dir / "kafka" / "data"

    @property
    def _server_properties(self) -> Path:
        return self._config_dir / "server.properties"

    def ensure_installed(self) -> InstallResult:
        """Copy the broker's jars from Maven Central into the cache, once per version."""
        require_tool("java", "run the Kafka broker")
        with exclusive(self.install_dir):
            if (self.install_dir / _COMPLETE_MARKER).is_file():
                return InstallResult(False, f"{self._jar_count()} jars cached")
            self._fetch_jars()
            return InstallResult(True, f"fetched {self._jar_count()} jars")

    def _jar_count(self) -> int:
        return len(list(self.libs_dir.glob("*.jar")))

    def _fetch_jars(self) -> None:
        mvn = require_tool("mvn", "fetch the Kafka jars from Maven Central")
        _require_java(MINIMUM_JAVA)
        self.install_dir.mkdir(parents=True, exist_ok=True)
        pom = self.install_dir / "pom.xml"
        pom.write_text(kafka_config.fetch_pom())
        staging = self.install_dir / "libs.partial"
        for stale in (staging, self.libs_dir):
            shutil.rmtree(stale, ignore_errors=True)
        run_logged(
            [
                mvn,
                "-q",
                "-B",
                "-f",
                str(pom),
                "dependency:copy-dependencies",
                f"-DoutputDirectory={staging}",
            ],
            self.install_dir / "mvn.log",
            cwd=self.install_dir,
            what=f"fetching Kafka {kafka_config.KAFKA_VERSION} with Maven",
        )
        if not any(staging.glob("kafka_*.jar")):
            raise InstallError(f"Maven finished but no Kafka jar is in {staging}")
        staging.rename(self.libs_dir)
        (self.install_dir / _COMPLETE_MARKER).write_text(f"{self._jar_count()}\n")

    def _classpath(self) -> str:
        return f"{self.libs_dir}/*"

    def _marker(self) -> str:
        return str(self._server_properties)

    def _prepare(self) -> None:
        """Write the config for the current ports; format storage only on the first start."""
        self._config_dir.mkdir(parents=True, exist_ok=True)
        self._data_dir.mkdir(parents=True, exist_ok=True)
        self._server_properties.write_text(
            kafka_config.server_properties(
                host=self.host,
                port=self.port,
                controller_port=self.controller_port,
                data_dir=self._data_dir,
                sasl_port=self.sasl_port,
                sasl_users=self.sasl_users,
            )
        )
        (self._config_dir / "log4j2.properties").write_text(kafka_config.log4j2_properties())
        if not (self._data_dir / "meta.properties").is_file():
            run_logged(
                [
                    *self._java(),
                    "kafka.tools.StorageTool",
                    "format",
                    "--ignore-formatted",
                    "-t",
                    kafka_config.new_cluster_id(),
                    "-c",
                    str(self._server_properties),
                ],
                self.log_dir / "kafka-format.log",
                cwd=self.state_dir,
                what="formatting Kafka storage",
            )

    def _java(self) -> list[str]:
        log4j = self._config_dir / "log4j2.properties"
        return [
            "java",
            f"-Xms{min(256, self.heap_mb)}m",
            f"-Xmx{self.heap_mb}m",
            "-XX:+ExitOnOutOfMemoryError",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={log4j}",
            "-cp",
            self._classpath(),
        ]

    def _command(self) -> list[str]:
        return [*self._java(), "kafka.Kafka", str(self._server_properties)]

    def _environment(self) -> dict[str, str]:
        """Without a stray KAFKA_OPTS or JAVA_TOOL_OPTIONS changing the JVM under us."""
        return {
            key: value
            for key, value in os.environ.items()
            if key not in ("KAFKA_OPTS", "JAVA_TOOL_OPTIONS", "CLASSPATH")
        }

    def _probe(self) -> None:
        if not port_open(self.host, self.port):
            raise ConnectionRefusedError(f"nothing listens on {self.address} yet")
        check_kafka(self.address, request_timeout=3.0)


def _require_java(minimum: int) -> None:
    """Kafka 4 needs Java 17; say so plainly instead of failing inside the JVM."""
    result = subprocess.run(["java", "-version"], capture_output=True, text=True)
    match = re.search(r'version "(\d+)', result.stderr)
    major = int(match.group(1)) if match else 0
    if major < minimum:
        raise InstallError(
            f"Kafka {kafka_config.KAFKA_VERSION} needs Java {minimum}+, found: "
            f"{result.stderr.splitlines()[0] if result.stderr else 'unknown'}"
        )
