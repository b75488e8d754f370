"""`python -m engram_connectors`: run the connectors service."""

from engram_connectors.config import ConnectorsSettings
from engram_connectors.main import create_app
from engram_platform.http import serve


def main() -> None:
    """Serve health endpoints and run the configured watchers until stopped."""
    settings = ConnectorsSettings()
    serve(create_app(settings), settings.host, settings.port)


if __name__ == "__main__":
    main()
