"""Container health: GET /healthz on this service's port (stdlib only; slim has no curl)."""

import os
import sys
import urllib.request

DEFAULT_PORTS = {
    "gateway": 8080,
    "ingest": 8081,
    "extraction": 8082,
    "embedding": 8083,
    "memory": 8084,
    "enrichment": 8085,
    "connectors": 8086,
    "mcp": 8087,
}


def main() -> int:
    service = os.environ.get("ENGRAM_SERVICE", "")
    port = os.environ.get(f"ENGRAM_{service.upper()}_PORT") or DEFAULT_PORTS.get(service)
    if not port:
        return 1
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/healthz", timeout=4) as response:
            return 0 if response.status == 200 else 1
    except OSError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
