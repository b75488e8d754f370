"""`python -m engram_gateway [serve | create-tenant NAME [--ops] [--quota QUOTA=LIMIT ...] |
set-limits [--tenant ID] [--quota QUOTA=LIMIT ...] [--rate CLASS=RATE/BURST ...] |
grant-admin]`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from engram_gateway.config import GatewaySettings


async def _create_tenant(
    name: str, settings: GatewaySettings, *, ops: bool = False, quotas: dict[str, int] | None = None
) -> str:
    """Create a tenant and return its key (the only time the key is visible): its first key,
    an admin key, or with `ops` an extra one carrying the `ops` role (the dashboard's).
    `quotas` are the tenant's own limits, stored on its row in place of the defaults.
    """
    from engram_gateway.adapters.registry import Registry
    from engram_gateway.adapters.usage import UsageCounters
    from engram_platform.mongo import connect_mongo

    client = connect_mongo(settings.mongodb_uri.get_secret_value(), app_name="engram-gateway-cli")
    try:
        registry = Registry(client[settings.database_name("gateway")])
        tenant_id, key = await registry.create_tenant(name)
        if quotas:
            await UsageCounters(registry.db).set_overrides(tenant_id, quotas)
        if ops:
            key = await registry.add_key(tenant_id, ("ops",))
        return key.plaintext
    finally:
        client.close()


async def _grant_admin(presented: str, settings: GatewaySettings) -> bool:
    """Give the admin role to the key presented (on stdin); False when it is not a live key."""
    from engram_gateway.adapters.keys import KeyStore
    from engram_gateway.adapters.registry import Registry
    from engram_gateway.domain.access import ADMIN
    from engram_platform.mongo import connect_mongo

    client = connect_mongo(settings.mongodb_uri.get_secret_value(), app_name="engram-gateway-cli")
    try:
        db = client[settings.database_name("gateway")]
        caller = await Registry(db).authenticate(presented)
        if caller is None:
            return False
        await KeyStore(db).grant(caller.tenant_id, caller.key_id, ADMIN)
        return True
    finally:
        client.close()


async def _set_limits(
    tenant: str | None,
    presented: str,
    settings: GatewaySettings,
    quotas: dict[str, int],
    rates: dict[str, Any],
) -> dict[str, Any] | None:
    """Change an existing tenant's own quotas and rate limits (named by id, or by one of its
    live keys); its limits afterwards, or None when there is no such tenant. A running
    gateway applies them within its cache time."""
    from engram_gateway.adapters.registry import Registry
    from engram_gateway.adapters.tenant_limits import TenantLimits
    from engram_gateway.adapters.usage import UsageCounters
    from engram_platform.mongo import connect_mongo

    client = connect_mongo(settings.mongodb_uri.get_secret_value(), app_name="engram-gateway-cli")
    try:
        db = client[settings.database_name("gateway")]
        if tenant is None:
            caller = await Registry(db).authenticate(presented)
            if caller is None:
                return None
            tenant = caller.tenant_id
        usage, limits = UsageCounters(db), TenantLimits(db)
        if not await usage.set_overrides(tenant, quotas):
            return None
        await limits.set_overrides(tenant, rates)
        return {
            "tenant_id": tenant,
            "quotas": await usage.overrides(tenant),
            "rate_limits": {
                name: {"rate": policy.rate, "burst": policy.burst}
                for name, policy in (await limits.overrides(tenant)).items()
            },
        }
    finally:
        client.close()


def _rate(text: str) -> tuple[str, Any]:
    """`--rate write=50/100`, refused by argparse with the reason when malformed."""
    from engram_gateway.domain.rate_limits import parse_rate_override

    try:
        return parse_rate_override(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _quota(text: str) -> tuple[str, int]:
    """`--quota memories=1000`, refused by argparse with the reason when malformed."""
    from engram_gateway.domain.quotas import parse_override

    try:
        return parse_override(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
    tenant.add_argument(
        "--quota",
        action="append",
        default=[],
        type=_quota,
        metavar="QUOTA=LIMIT",
        help="the tenant's own limit for memories, documents or document_bytes (repeatable)",
    )
    limits = commands.add_parser(
        "set-limits",
        help="change an existing tenant's own quotas and rate limits and print them as JSON; "
        "the tenant is named by --tenant ID or by one of its API keys read from stdin",
    )
    limits.add_argument("--tenant", metavar="ID", help="the tenant's id (else a key on stdin)")
    limits.add_argument(
        "--quota",
        action="append",
        default=[],
        type=_quota,
        metavar="QUOTA=LIMIT",
        help="memories, documents or document_bytes (repeatable)",
    )
    limits.add_argument(
        "--rate",
        action="append",
        default=[],
        type=_rate,
        metavar="CLASS=RATE/BURST",
        help="requests a second and bucket size for write, bulk or read (repeatable); "
        "a bulk request costs one token per memory",
    )
    commands.add_parser(
        "grant-admin",
        help="give the admin role to the API key read from stdin (for a tenant whose keys "
        "predate roles)",
    )
    args = parser.parse_args(argv)
    settings = GatewaySettings()
    if args.command == "grant-admin":
        granted = asyncio.run(_grant_admin(sys.stdin.readline().strip(), settings))
        if not granted:
            print("error: that is not a live API key", file=sys.stderr)
            return 1
        return 0
    if args.command == "set-limits":
        presented = "" if args.tenant else sys.stdin.readline().strip()
        changed = asyncio.run(
            _set_limits(args.tenant, presented, settings, dict(args.quota), dict(args.rate))
        )
        if changed is None:
            print(
                "error: no such tenant (give --tenant ID or a live API key on stdin)",
                file=sys.stderr,
            )
            return 1
        print(json.dumps(changed))
        return 0
    if args.command == "create-tenant":
        quotas = dict(args.quota)
        try:
            print(asyncio.run(_create_tenant(args.name, settings, ops=args.ops, quotas=quotas)))
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
