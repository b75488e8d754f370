"""`python -m engram_embedding`: run the embedding service."""

from engram_embedding.config import EmbeddingSettings
from engram_embedding.main import create_app
from engram_platform.http import serve


def main() -> None:
    """Consume embedding requests until stopped."""
    settings = EmbeddingSettings()
    serve(create_app(settings), settings.host, settings.port)


if __name__ == "__main__":
    main()
