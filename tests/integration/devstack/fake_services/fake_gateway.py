"""A stand-in gateway: /readyz, /v1/agents with bearer check, /ops/login (303 for an ops key),
and `create-tenant NAME [--ops]`."""

import http.server
import json
import os
import secrets
import sys
import urllib.parse
from pathlib import Path

KEYS = Path(os.environ.get("FAKE_GATEWAY_KEYS", "fake-gateway-keys.json"))


def _keys() -> dict[str, str]:
    return json.loads(KEYS.read_text()) if KEYS.exists() else {}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/readyz":
            wired = all(os.environ.get(name) for name in ("KAFKA_BOOTSTRAP_SERVERS", "MONGODB_URI"))
            self._reply(200 if wired else 503)
        elif self.path == "/v1/agents":
            key = self.headers.get("Authorization", "").removeprefix("Bearer ")
            self._reply(200 if key in _keys() else 401)
        else:
            self._reply(404)

    def do_POST(self) -> None:
        if self.path != "/ops/login":
            self._reply(404)
            return
        form = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        key = urllib.parse.parse_qs(form).get("api_key", [""])[0]
        self._reply(303 if _keys().get(key, "").endswith(" (ops)") else 401)

    def _reply(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def main() -> None:
    if sys.argv[1:2] == ["create-tenant"]:
        key = "ek_" + secrets.token_urlsafe(16)
        name = sys.argv[2] + (" (ops)" if "--ops" in sys.argv[3:] else "")
        KEYS.write_text(json.dumps({**_keys(), key: name}))
        print("creating tenant", file=sys.stderr)
        print(key)
        return
    host = os.environ["ENGRAM_GATEWAY_HOST"]
    port = int(os.environ["ENGRAM_GATEWAY_PORT"])
    http.server.ThreadingHTTPServer((host, port), Handler).serve_forever()


main()
