"""`engram agents`, `engram lineage ID`, `engram health`: small read/write commands."""

from __future__ import annotations

import argparse

from engram_client import models
from engram_client.cli import exit_codes
from engram_client.cli.common import client_from
from engram_client.cli.output import emit


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `agents`, `lineage` and `health`."""
    agents = commands.add_parser("agents", help="create, list and delete agents")
    actions = agents.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="register an agent; prints its id")
    create.add_argument("--name", help="a display name")
    create.set_defaults(handler=create_agent)
    actions.add_parser("list", help="list this tenant's agents").set_defaults(handler=list_agents)
    delete = actions.add_parser("delete", help="delete an agent")
    delete.add_argument("agent_id", metavar="AGENT")
    delete.set_defaults(handler=delete_agent)

    lineage = commands.add_parser(
        "lineage",
        help="show what an id derives and derives from",
        description="For a document or record: what was derived from it; for a fact or "
        "memory: what it was derived from. Printed as JSON.",
    )
    lineage.add_argument("item_id", metavar="ID")
    lineage.set_defaults(handler=show_lineage)

    health = commands.add_parser(
        "health", help="check the gateway is up and ready (exit 1 if not ready)"
    )
    health.set_defaults(handler=show_health)


def create_agent(args: argparse.Namespace) -> int:
    """Register an agent and print its id."""
    with client_from(args) as client:
        agent = client.create_agent(args.name)
    emit(agent, args.json, lambda a: a.agent_id)
    return exit_codes.OK


def list_agents(args: argparse.Namespace) -> int:
    """Print the tenant's agents."""
    with client_from(args) as client:
        agents = client.list_agents()
    emit(agents, args.json, _agents_text)
    return exit_codes.OK


def _agents_text(agents: list[models.Agent]) -> str:
    return "\n".join(f"{a.agent_id}  {a.name or ''}".rstrip() for a in agents)


def delete_agent(args: argparse.Namespace) -> int:
    """Delete an agent."""
    with client_from(args) as client:
        client.delete_agent(args.agent_id)
    emit({"deleted": args.agent_id}, args.json, lambda _: "")
    return exit_codes.OK


def show_lineage(args: argparse.Namespace) -> int:
    """Print the lineage graph around an id."""
    with client_from(args) as client:
        lineage = client.lineage(args.item_id)
    emit(lineage, True)
    return exit_codes.OK


def show_health(args: argparse.Namespace) -> int:
    """Readiness with its checks; a 503 raises and exits 1 with the reason."""
    with client_from(args) as client:
        ready = client.ready()
    emit(
        ready,
        args.json,
        lambda r: f"{r.status}  " + " ".join(f"{k}={v}" for k, v in r.checks.items()),
    )
    return exit_codes.OK
