"""`python -m engram_gateway [serve | create-tenant NAME]`."""

from __future__ import annotations

import argparse
import asyncio
import sys

from engram_gateway.config import GatewaySettings


async def _create_tenant(name: str, settings: GatewaySettings, *, ops: bool = False) -> str:
    """Create a tenant and return its key (the only time the key is visible).

    With `ops`, the returned key is an extra one carrying the `ops` role (the dashboard's).
    """
    from engram_gateway.adapters.registry import Registry
    from engram_platform.mongo import connect_mongo

    client = connect_mongo(settings.mongodb_uri.get_secret_value(), app_name="engram-gateway-cli")
    try:
        registry = Registry(client[settings.database_name("gateway")])
        tenant_id, key = await registry.create_tenant(name)
        if ops:
            key = await registry.add_key(tenant_id, ("ops",))
        return key.plaintext
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    """Serve the gateway, or create a tenant and print only its API key."""
    parser = argparse.ArgumentParser(
        prog="python -m engram_gateway",
        description="Engram's HTTP gateway. Reads KAFKA_BOOTSTRAP_SERVERS, MONGODB_URI and "
        "ENGRAM_GATEWAY_* settings from the environment.",
    )
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("serve", help="run the HTTP API (the default)")
    tenant = commands.add_parser("create-tenant", help="create a tenant and print its API key")
    tenant.add_argument("name", help="a display name for the tenant")
    tenant.add_argument("--ops", action="store_true", help="print a key with the ops role")
    args = parser.parse_args(argv)
    settings = GatewaySettings()
    if args.command == "create-tenant":
        try:
            print(asyncio.run(_create_tenant(args.name, settings, ops=args.ops)))
        except Exception as exc:
            print(
                f"error: could not create tenant ({type(exc).__name__}); is MongoDB up at MONGODB_URI?",
                file=sys.stderr,
            )
            return 1
        return 0
    from engram_gateway.main import MissingInternalToken, create_app
    from engram_platform.http import serve

    try:
        app = create_app(settings)
    except MissingInternalToken as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    serve(app, settings.host, settings.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
