"""Where the dev stack keeps caches, logs and data: one git-ignored `.engram/` in the repo root."""

import os
from dataclasses import dataclass
from pathlib import Path

ROOT_ENV = "ENGRAM_ROOT"
CACHE_ENV = "ENGRAM_CACHE_DIR"
_PACKAGE_DIR = Path(__file__).resolve().parent


def _looks_like_repo_root(path: Path) -> bool:
    """The repo root is where this package's sources sit under deploy/local."""
    return (path / "deploy" / "local" / "pyproject.toml").is_file()


def repo_root() -> Path:
    """ENGRAM_ROOT, else the checkout this package is installed from, else the nearest ancestor."""
    if override := os.environ.get(ROOT_ENV):
        return Path(override).resolve()
    for candidate in (*_PACKAGE_DIR.parents, Path.cwd(), *Path.cwd().parents):
        if _looks_like_repo_root(candidate):
            return candidate
    return Path.cwd()


@dataclass(frozen=True)
class Layout:
    """Every path under `.engram/`, so no module invents its own."""

    root: Path

    @classmethod
    def discover(cls) -> "Layout":
        """The layout of the current checkout."""
        return cls(repo_root())

    @property
    def engram_dir(self) -> Path:
        return self.root / ".engram"

    @property
    def cache_dir(self) -> Path:
        """Downloads and builds, keyed by version; ENGRAM_CACHE_DIR lets tests share one."""
        if override := os.environ.get(CACHE_ENV):
            return Path(override).resolve()
        return self.engram_dir / "cache"

    @property
    def logs_dir(self) -> Path:
        return self.engram_dir / "logs"

    @property
    def data_dir(self) -> Path:
        """State that persists across runs: Kafka logs, FerretDB files, service pid files."""
        return self.engram_dir / "data"

    @property
    def run_env(self) -> Path:
        """Written once the platform is ready: ENGRAM_URL, ENGRAM_API_KEY, ENGRAM_OPS_API_KEY and
        ENGRAM_MCP_URL."""
        return self.engram_dir / "run.env"

    @property
    def stack_env(self) -> Path:
        """KAFKA_BOOTSTRAP_SERVERS and MONGODB_URI for tools and `tenant`."""
        return self.engram_dir / "stack.env"

    @property
    def api_key_file(self) -> Path:
        """The development tenant's key, reused across runs."""
        return self.engram_dir / "dev-api-key"

    @property
    def ops_key_file(self) -> Path:
        """The ops dashboard's key (the ops role), reused across runs."""
        return self.engram_dir / "ops-api-key"

    @property
    def internal_token_file(self) -> Path:
        """The token every service of `make run` requires on internal calls, made once."""
        return self.engram_dir / "internal-token"

    @property
    def ferretdb_source(self) -> Path:
        """Our small Go main module that embeds FerretDB."""
        beside_package = _PACKAGE_DIR.parent / "ferretdb"
        if (beside_package / "go.mod").is_file():
            return beside_package
        return self.root / "deploy" / "local" / "ferretdb"
