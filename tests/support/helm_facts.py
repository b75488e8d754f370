"""What the code says about each service, read from the code itself, for checking deployments
(the chart's catalog, docker-compose.yml) against it rather than against themselves."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic_settings import BaseSettings

from engram_devstack.services import SERVICE_NAMES

ROOT = Path(__file__).resolve().parents[2]
SERVICES_DIR = ROOT / "services"
# The gateway's settings name each owning service it calls as `<service>_url`.
UPSTREAM_FIELD = re.compile(r"^(?P<service>[a-z]+)_url$")


@dataclass(frozen=True)
class ServiceFacts:
    names: tuple[str, ...]
    """Every service `make run` starts."""
    ports: dict[str, int]
    """Each service's default port, from its settings class."""
    consumers: frozenset[str]
    """Services that register consumer handlers (`rt.consumer.on(`) and so join a group."""
    internal_callers: dict[str, set[str]]
    """For each service with an internal API someone calls, the services that call it."""


def default_port(service: str) -> int:
    module = importlib.import_module(f"engram_{service}.config")
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, BaseSettings)
        and value.__module__ == module.__name__
        and "port" in value.model_fields
    ]
    assert len(classes) == 1, f"engram_{service}.config: one settings class with a port"
    return int(classes[0].model_fields["port"].default)


def registers_consumers(service: str) -> bool:
    main = SERVICES_DIR / service / f"engram_{service}" / "main.py"
    return main.is_file() and "rt.consumer.on(" in main.read_text()


def gateway_upstreams() -> set[str]:
    from engram_gateway.config import GatewaySettings

    found = set()
    for field in GatewaySettings.model_fields:
        match = UPSTREAM_FIELD.match(field)
        if match and match["service"] in SERVICE_NAMES:
            found.add(match["service"])
    return found


def chart_facts() -> ServiceFacts:
    names = tuple(SERVICE_NAMES)
    return ServiceFacts(
        names=names,
        ports={name: default_port(name) for name in names},
        consumers=frozenset(name for name in names if registers_consumers(name)),
        internal_callers={upstream: {"gateway"} for upstream in gateway_upstreams()},
    )


def settings_env_names(service: str) -> set[str]:
    """The environment variables a service's settings class reads (aliases as given, else the
    env prefix and the field's name)."""
    from pydantic import AliasChoices

    module = importlib.import_module(f"engram_{service}.config")
    (cls,) = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, BaseSettings)
        and value.__module__ == module.__name__
    ]
    prefix = str(cls.model_config.get("env_prefix", ""))
    names: set[str] = set()
    for name, field in cls.model_fields.items():
        alias = field.validation_alias or field.alias
        if isinstance(alias, AliasChoices):
            names.update(c.upper() for c in alias.choices if isinstance(c, str))
        elif isinstance(alias, str):
            names.add(alias.upper())
        else:
            names.add(f"{prefix}{name}".upper())
    return names
