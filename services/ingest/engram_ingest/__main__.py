"""`python -m engram_ingest`: run the ingest service."""

from engram_ingest.config import IngestSettings
from engram_ingest.main import create_app
from engram_platform.http import serve


def main() -> None:
    """Serve the internal API and consume documents until stopped."""
    settings = IngestSettings()
    serve(create_app(settings), settings.host, settings.port)


if __name__ == "__main__":
    main()
