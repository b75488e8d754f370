"""`python -m engram_enrichment`: run the enrichment service."""

from engram_enrichment.config import EnrichmentSettings
from engram_enrichment.main import create_app
from engram_platform.http import serve


def main() -> None:
    """Serve the internal API and consume record events until stopped."""
    settings = EnrichmentSettings()
    serve(create_app(settings), settings.host, settings.port)


if __name__ == "__main__":
    main()
