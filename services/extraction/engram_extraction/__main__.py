"""`python -m engram_extraction`: run the extraction service."""

from engram_extraction.config import ExtractionSettings
from engram_extraction.main import create_app
from engram_platform.http import serve


def main() -> None:
    """Serve the internal API and consume documents and imports until stopped."""
    settings = ExtractionSettings()
    serve(create_app(settings), settings.host, settings.port)


if __name__ == "__main__":
    main()
