"""`python -m engram_memory`: run the memory service."""

from engram_memory.config import MemorySettings
from engram_memory.main import create_app
from engram_platform.http import serve


def main() -> None:
    """Serve the internal API and consume memory events until stopped."""
    settings = MemorySettings()
    serve(create_app(settings), settings.host, settings.port)


if __name__ == "__main__":
    main()
