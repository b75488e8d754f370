"""Serve mongoeco's SQLite engine over the MongoDB wire protocol until SIGINT or SIGTERM.

Run by the dev stack with a Python >= 3.13 interpreter; never imported by the package.
"""

import argparse
import asyncio
import signal

from mongoeco.engines import SQLiteEngine
from mongoeco.wire import AsyncMongoEcoProxyServer


async def serve(host: str, port: int, database: str) -> None:
    """Start the proxy server and wait for a stop signal."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = AsyncMongoEcoProxyServer(engine=SQLiteEngine(database), host=host, port=port)
    address = await server.start()
    print(f"mongoeco: serving {address.host}:{address.port} from {database}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=27017)
    parser.add_argument("--database", required=True, help="SQLite file for all databases")
    arguments = parser.parse_args()
    asyncio.run(serve(arguments.host, arguments.port, arguments.database))


if __name__ == "__main__":
    main()
