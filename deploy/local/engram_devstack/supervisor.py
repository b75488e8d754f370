"""`make run`: the whole platform in the foreground until Ctrl-C or SIGTERM, then nothing left."""

import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from engram_devstack import cpus, models, processes, services
from engram_devstack.envfiles import read_env_file, write_env_file, write_secret
from engram_devstack.errors import DevstackError
from engram_devstack.models import MODEL_DIR_ENV
from engram_devstack.paths import Layout
from engram_devstack.ports import port_open
from engram_devstack.private import internal_token
from engram_devstack.progress import Stopwatch, say
from engram_devstack.server import ManagedServer
from engram_devstack.signals import (
    ShutdownRequested,
    raise_shutdown,
    restore,
    route_stop_signals,
    signals_deferred,
)
from engram_devstack.stack import Endpoints, Stack, start_and_wait
from engram_devstack.tenants import create_tenant, key_rejected

DEV_TENANT = "dev"
OPS_TENANT = "ops"
_INFRA_CHECK_SECONDS = 2.0


@dataclass(frozen=True)
class RunOptions:
    """What `run` starts and where the gateway listens."""

    gateway_host: str = "127.0.0.1"
    gateway_port: int = 8080
    mcp_port: int = 8087
    service_names: Sequence[str] = field(default=services.SERVICE_NAMES)
    ready_timeout: float = 300.0
    model_cpus: frozenset[int] = frozenset()

    @property
    def reachable_host(self) -> str:
        """Where to connect when the gateway binds every interface."""
        return "127.0.0.1" if self.gateway_host in ("0.0.0.0", "") else self.gateway_host

    @property
    def url(self) -> str:
        return f"http://{self.reachable_host}:{self.gateway_port}"

    @property
    def mcp_url(self) -> str | None:
        """The MCP server's streamable-HTTP endpoint, when it is started."""
        if "mcp" not in self.service_names:
            return None
        return f"http://{self.reachable_host}:{self.mcp_port}/mcp"


class Supervisor:
    """Starts the stack and the services, keeps them alive, and stops all of it on a signal."""

    def __init__(self, layout: Layout, stack: Stack, options: RunOptions) -> None:
        self.layout = layout
        self.stack = stack
        self.options = options
        self.services: list[services.ServiceProcess] = []
        self._pid_file = processes.PidFile(_supervisor_pid_path(layout))
        self._service_pids = layout.data_dir / "services"
        self._infra: list[ManagedServer] = []

    def run(self) -> int:
        """0 after a requested stop, 1 when something failed on the way up."""
        services.require_importable(self.options.service_names)
        self._claim()
        exit_code = 0
        previous = route_stop_signals(raise_shutdown)
        try:
            self._remove_env_files()
            self._reserve_model_cpus()
            endpoints = self._start_stack()
            self._start_services(endpoints)
            if "gateway" in self.options.service_names:
                self._wait_gateway_ready()
                self._announce(
                    self._saved_key(endpoints, DEV_TENANT, self.layout.api_key_file),
                    self._saved_key(endpoints, OPS_TENANT, self.layout.ops_key_file, ops=True),
                )
            else:
                say("gateway not started, so no readiness check, key or run.env")
            self._supervise_forever()
        except ShutdownRequested:
            say("stop requested")
        except DevstackError as error:
            say(f"error: {error}")
            exit_code = 1
        finally:
            route_stop_signals(_ignore_while_stopping)
            self._stop_everything()
            restore(previous)
        return exit_code

    def _claim(self) -> None:
        """One supervisor per checkout: two would fight over ports and pid files."""
        other = active_supervisor(self.layout)
        if other is not None and other != os.getpid():
            raise DevstackError(f"another `run` is active (pid {other}); stop it first")
        self._pid_file.write(os.getpid())

    def _remove_env_files(self) -> None:
        """run.env appears only once the platform is ready, so nobody reads a stale one."""
        self.layout.run_env.unlink(missing_ok=True)
        self.layout.stack_env.unlink(missing_ok=True)

    def _reserve_model_cpus(self) -> None:
        """With --model-cpus, this process and so all it starts run on the other CPUs."""
        if not self.options.model_cpus:
            return
        rest = cpus.others(self.options.model_cpus)
        cpus.keep_on(rest, [os.getpid()])
        say(
            f"cpus: the model on {sorted(self.options.model_cpus)}, everything else on {sorted(rest)}"
        )

    def _start_stack(self) -> Endpoints:
        endpoints = self.stack.up()
        write_env_file(self.layout.stack_env, endpoints.as_env())
        self._infra = self.stack.servers_in_use()
        if self.options.model_cpus:
            running = [server.running_pid() for server in self._infra]
            cpus.keep_on(
                frozenset(os.sched_getaffinity(0)), [pid for pid in running if pid is not None]
            )
        return endpoints

    def _service_env(self, endpoints: Endpoints) -> dict[str, str]:
        env = dict(os.environ)
        env.update(endpoints.as_env())
        env.update(
            ENGRAM_GATEWAY_HOST=self.options.gateway_host,
            ENGRAM_GATEWAY_PORT=str(self.options.gateway_port),
            ENGRAM_DATA_DIR=str(self.layout.data_dir),
            ENGRAM_MCP_TRANSPORT="http",
            ENGRAM_MCP_HOST=self.options.gateway_host,
            ENGRAM_MCP_PORT=str(self.options.mcp_port),
            ENGRAM_MCP_GATEWAY_URL=self.options.url,
            ENGRAM_INTERNAL_TOKEN=internal_token(self.layout),
            PYTHONUNBUFFERED="1",
        )
        env.setdefault(MODEL_DIR_ENV, str(models.models_dir(self.layout.cache_dir)))
        if self.options.model_cpus:
            env.update(cpus.model_env(self.options.model_cpus))
        return env

    def _start_services(self, endpoints: Endpoints) -> None:
        services.stop_leftovers(services.SERVICE_NAMES, self._service_pids)
        if port_open(self.options.reachable_host, self.options.gateway_port):
            port = self.options.gateway_port
            raise DevstackError(
                f"gateway port {port} is already in use by another process; pass --gateway-port"
            )
        mcp_port = self.options.mcp_port
        if self.options.mcp_url and port_open(self.options.reachable_host, mcp_port):
            raise DevstackError(
                f"mcp port {mcp_port} is already in use by another process; pass --mcp-port"
            )
        missing_models: set[str] = set()
        for name in models.DEFAULT_MODELS:
            try:
                models.ensure_model(self.layout.cache_dir, name)
            except models.MavenMissing as missing:
                missing_models.add(name)
                say(f"models: {name} not fetched ({missing}); embedders that need it will not load")
        env = self._service_env(endpoints)
        if fallbacks := models.file_fallbacks(missing_models, env):
            env.update(fallbacks)
            say("models: the services run MiniLM from its wheel's file (slower, another space)")
        watch = Stopwatch()
        for name in self.options.service_names:
            service = services.ServiceProcess(
                name, env, self.layout.logs_dir, self._service_pids, self.layout.root
            )
            with signals_deferred():
                service.start()
                self.services.append(service)
        names = ", ".join(self.options.service_names)
        say(f"services: started {names} (logs in {self.layout.logs_dir}) {watch}")

    def _wait_gateway_ready(self) -> None:
        watch = Stopwatch()
        url = f"{self.options.url}/readyz"
        last = "no answer yet"
        while watch.seconds < self.options.ready_timeout:
            self._supervise_once()
            last = _http_status(url)
            if last == "200":
                say(f"gateway: ready at {self.options.url} {watch}")
                return
            time.sleep(0.5)
        gateway_log = self.layout.logs_dir / "gateway.log"
        raise DevstackError(
            f"gateway not ready after {self.options.ready_timeout:.0f}s (GET {url}: {last}); "
            f"last lines of {gateway_log}:\n{processes.tail(gateway_log)}"
        )

    def _saved_key(
        self, endpoints: Endpoints, tenant: str, saved_in: Path, *, ops: bool = False
    ) -> str:
        """Reuse the key saved for this tenant unless the gateway rejects it; otherwise mint one."""
        try:
            saved = saved_in.read_text().strip()
        except OSError:
            saved = ""
        if saved and not key_rejected(self.options.url, saved):
            say(f"{tenant} tenant: reusing the key in {saved_in}")
            return saved
        watch = Stopwatch()
        key = create_tenant(tenant, self._service_env(endpoints), cwd=self.layout.root, ops=ops)
        write_secret(saved_in, key)
        say(f"{tenant} tenant: created, key saved in {saved_in} {watch}")
        return key

    def _announce(self, key: str, ops_key: str) -> None:
        values = {
            "ENGRAM_URL": self.options.url,
            "ENGRAM_API_KEY": key,
            "ENGRAM_OPS_API_KEY": ops_key,
        }
        if self.options.mcp_url:
            values["ENGRAM_MCP_URL"] = self.options.mcp_url
        write_env_file(self.layout.run_env, values)
        say(f"ready: wrote {self.layout.run_env}; Ctrl-C stops everything")
        print(f"ENGRAM_URL={self.options.url}", flush=True)
        print(f"ENGRAM_API_KEY={key}", flush=True)
        if self.options.mcp_url:
            print(f"ENGRAM_MCP_URL={self.options.mcp_url}", flush=True)
        print(
            f"ops dashboard: {self.options.url}/ops (sign in with ENGRAM_OPS_API_KEY from "
            f"{self.layout.run_env})",
            flush=True,
        )

    def _supervise_forever(self) -> None:
        last_infra_check = time.monotonic()
        while True:
            self._supervise_once()
            if time.monotonic() - last_infra_check > _INFRA_CHECK_SECONDS:
                self._revive_infra()
                last_infra_check = time.monotonic()
            time.sleep(0.5)

    def _supervise_once(self) -> None:
        for service in self.services:
            with signals_deferred():
                service.supervise()

    def _revive_infra(self) -> None:
        """A dead broker or database is restarted; services reconnect on their own."""
        for server in self._infra:
            if server.running_pid() is not None:
                continue
            say(f"{server.name}: exited unexpectedly; last lines of {server.log_file}:")
            for line in processes.tail(server.log_file, 5).splitlines():
                say(f"  | {line}")
            try:
                if start_and_wait(server, timeout=120.0):
                    self.stack.started.add(server.name)
            except DevstackError as error:
                say(f"{server.name}: restart failed, will retry: {error}")

    def _stop_everything(self) -> None:
        watch = Stopwatch()
        if self.services:
            services.stop_all(self.services)
            say(f"services: stopped {watch}")
        services.stop_leftovers(services.SERVICE_NAMES, self._service_pids)
        self.stack.down(only_started=True)
        self._remove_env_files()
        self._pid_file.remove()
        say(f"all stopped {watch}")


def _supervisor_pid_path(layout: Layout) -> Path:
    return layout.data_dir / "supervisor.pid"


def active_supervisor(layout: Layout) -> int | None:
    """The pid of a live `run` in this checkout, if any."""
    pid = processes.PidFile(_supervisor_pid_path(layout)).read()
    if pid is not None and processes.pid_alive(pid):
        if "engram_devstack" in " ".join(processes.command_line(pid)):
            return pid
    return None


def tenant_key(layout: Layout, name: str) -> str:
    """`make tenant name=NAME`: a new tenant's key, using the running stack's addresses."""
    try:
        stack_env = read_env_file(layout.stack_env)
    except OSError as error:
        raise DevstackError(
            f"no {layout.stack_env}: start the platform with `make run` first"
        ) from error
    env = {**os.environ, **stack_env}
    return create_tenant(name, env, cwd=layout.root)


def _http_status(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            return str(response.status)
    except urllib.error.HTTPError as error:
        return str(error.code)
    except OSError as error:
        return type(error).__name__


def _ignore_while_stopping(signum: int, frame: FrameType | None) -> None:
    print(f"[engram] already stopping (signal {signum}); please wait", file=sys.stderr)
