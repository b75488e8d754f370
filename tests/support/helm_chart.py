"""Render deploy/helm/engram with the cached helm and check the invariants the chart promises.

Each check takes rendered manifests and returns the problems it found (empty: holds), so a test
can also feed it a deliberately broken manifest and see it fail. `python -m tests.support.helm_chart`
is what `make lint` runs: every values file in the chart, every check, exit 1 on any problem.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "engram"
HELM_VERSION = "v4.3.2"
CONSUMER_GROUP_ANNOTATION = "engram.dev/consumer-group"
# Names of environment variables and ConfigMap keys that must only ever come from a Secret.
SECRET_NAME = re.compile(r"(TOKEN|API_KEY|PASSWORD|SECRET|MONGODB_URI)", re.IGNORECASE)
# A connection string with a password in it, wherever it appears.
CREDENTIALED_URI = re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.IGNORECASE)

Manifest = dict[str, Any]


class RenderError(Exception):
    """helm refused to render; the message is its stderr."""


def helm_binary() -> Path | None:
    """The helm `make lint` builds (ENGRAM_HELM overrides), or None when it is not there."""
    override = os.environ.get("ENGRAM_HELM")
    path = (
        Path(override) if override else ROOT / ".engram" / "cache" / f"helm-{HELM_VERSION}" / "helm"
    )
    return path if path.is_file() and os.access(path, os.X_OK) else None


def render(
    helm: Path, values: Sequence[Path] = (), sets: Sequence[str] = (), release: str = "engram"
) -> list[Manifest]:
    """`helm template` of the chart, parsed; RenderError with helm's message when it fails."""
    argv = [str(helm), "template", release, str(CHART)]
    for path in values:
        argv += ["-f", str(path)]
    for item in sets:
        argv += ["--set", item]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RenderError(done.stderr.strip())
    return [doc for doc in yaml.safe_load_all(done.stdout) if isinstance(doc, dict)]


def lint(helm: Path, values: Sequence[Path] = ()) -> None:
    """`helm lint --strict`; RenderError with its output when it fails."""
    argv = [str(helm), "lint", "--strict", str(CHART)]
    for path in values:
        argv += ["-f", str(path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RenderError((done.stdout + done.stderr).strip())


def of_kind(manifests: Iterable[Manifest], kind: str) -> list[Manifest]:
    return [m for m in manifests if m.get("kind") == kind]


def component(manifest: Manifest) -> str:
    labels = manifest.get("metadata", {}).get("labels") or {}
    return str(labels.get("app.kubernetes.io/component", ""))


def containers(deployment: Manifest) -> list[Manifest]:
    spec = deployment["spec"]["template"]["spec"]
    return list(spec.get("containers") or []) + list(spec.get("initContainers") or [])


def check_probes_and_resources(manifests: Iterable[Manifest]) -> list[str]:
    """Every container: liveness on /healthz, readiness on /readyz, requests and a memory limit."""
    problems = []
    for deployment in of_kind(manifests, "Deployment"):
        for container in containers(deployment):
            where = f"{deployment['metadata']['name']}/{container.get('name')}"
            for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                got = ((container.get(probe) or {}).get("httpGet") or {}).get("path")
                if got != path:
                    problems.append(f"{where}: {probe} should GET {path}, has {got!r}")
            resources = container.get("resources") or {}
            if not (resources.get("requests") or {}).get("cpu"):
                problems.append(f"{where}: no cpu request")
            if not (resources.get("requests") or {}).get("memory"):
                problems.append(f"{where}: no memory request")
            if not (resources.get("limits") or {}).get("memory"):
                problems.append(f"{where}: no memory limit")
    return problems


def config_maps(manifests: Iterable[Manifest]) -> dict[str, dict[str, str]]:
    return {
        m["metadata"]["name"]: {str(k): str(v) for k, v in (m.get("data") or {}).items()}
        for m in of_kind(manifests, "ConfigMap")
    }


def container_env(manifests: Sequence[Manifest], container: Manifest) -> dict[str, str]:
    """The plain environment a container gets: its ConfigMaps (envFrom), then literal `env`."""
    maps = config_maps(manifests)
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        ref = source.get("configMapRef")
        if ref:
            env.update(maps.get(ref["name"], {}))
    for item in container.get("env") or []:
        if "value" in item:
            env[item["name"]] = str(item["value"])
    return env


def check_consumer_groups(
    manifests: Sequence[Manifest], consumers: Iterable[str], prefix: str
) -> list[str]:
    """Each consumer reads the broker address and the topic prefix its group id is made of,
    says that group (`<prefix>engram-<service>`) and, when scaled by KEDA, is scaled on it."""
    problems = []
    deployments = {component(d): d for d in of_kind(manifests, "Deployment")}
    scaled = {component(s): s for s in of_kind(manifests, "ScaledObject")}
    for service in consumers:
        deployment = deployments.get(service)
        if deployment is None:
            problems.append(f"{service}: no Deployment")
            continue
        group = f"{prefix}engram-{service}"
        annotated = (deployment["metadata"].get("annotations") or {}).get(CONSUMER_GROUP_ANNOTATION)
        if annotated != group:
            problems.append(f"{service}: consumer group annotation {annotated!r}, want {group!r}")
        env = container_env(manifests, containers(deployment)[0])
        if env.get("ENGRAM_TOPIC_PREFIX") != prefix:
            problems.append(f"{service}: ENGRAM_TOPIC_PREFIX {env.get('ENGRAM_TOPIC_PREFIX')!r}")
        if not env.get("KAFKA_BOOTSTRAP_SERVERS"):
            problems.append(f"{service}: no KAFKA_BOOTSTRAP_SERVERS")
        if service in scaled:
            triggers = scaled[service]["spec"]["triggers"]
            groups = {t["metadata"].get("consumerGroup") for t in triggers if t["type"] == "kafka"}
            if groups != {group}:
                problems.append(f"{service}: ScaledObject scales on {sorted(map(str, groups))}")
    return problems


def secret_values(manifests: Iterable[Manifest]) -> set[str]:
    """Every value the chart's Secrets hold (stringData as rendered)."""
    found = set()
    for secret in of_kind(manifests, "Secret"):
        for value in (secret.get("stringData") or {}).values():
            if str(value):
                found.add(str(value))
    return found


def check_no_secret_in_config_maps(
    manifests: Sequence[Manifest], extra_secrets: Iterable[str] = ()
) -> list[str]:
    """No ConfigMap key names a secret, holds a Secret's value, or holds a credentialed URI;
    and no container takes a secret-named variable as a literal value instead of a secretKeyRef."""
    problems = []
    secrets = secret_values(manifests) | {s for s in extra_secrets if s}
    for name, data in config_maps(manifests).items():
        for key, value in data.items():
            if SECRET_NAME.search(key):
                problems.append(f"ConfigMap {name}: key {key} names a secret")
            if CREDENTIALED_URI.search(value):
                problems.append(f"ConfigMap {name}: {key} holds a URI with credentials")
            if any(secret in value for secret in secrets):
                problems.append(f"ConfigMap {name}: {key} holds a Secret's value")
    for deployment in of_kind(manifests, "Deployment"):
        for container in containers(deployment):
            for item in container.get("env") or []:
                if SECRET_NAME.search(item["name"]) and "valueFrom" not in item:
                    problems.append(f"{deployment['metadata']['name']}: {item['name']} is literal")
    return problems


def selects(policy: Manifest, labels: dict[str, str]) -> bool:
    wanted = policy["spec"].get("podSelector", {}).get("matchLabels") or {}
    return all(labels.get(k) == v for k, v in wanted.items())


PUBLIC_SERVICES = frozenset({"gateway", "mcp"})


def check_network_policies(
    manifests: Sequence[Manifest],
    internal_callers: dict[str, set[str]],
    public: frozenset[str] = PUBLIC_SERVICES,
) -> list[str]:
    """Every Service port is behind an ingress NetworkPolicy on its pods; any other service's
    rules admit only its callers' pods (a rule without `from` would admit anyone), and a
    service nobody calls admits nothing."""
    problems = []
    policies = [
        p for p in of_kind(manifests, "NetworkPolicy") if "Ingress" in p["spec"]["policyTypes"]
    ]
    for service in of_kind(manifests, "Service"):
        name = component(service)
        selector = service["spec"].get("selector") or {}
        covering = [p for p in policies if selects(p, selector)]
        if not covering:
            problems.append(f"Service {service['metadata']['name']}: no NetworkPolicy covers it")
            continue
        if name in public:
            continue
        callers = internal_callers.get(name, set())
        for policy in covering:
            for rule in policy["spec"].get("ingress") or []:
                peers = rule.get("from") or []
                if not peers:
                    problems.append(f"{name}: {policy['metadata']['name']} admits any source")
                for peer in peers:
                    caller = (
                        (peer.get("podSelector") or {})
                        .get("matchLabels", {})
                        .get("app.kubernetes.io/component")
                    )
                    if caller not in callers or "namespaceSelector" in peer:
                        problems.append(f"{name}: admits {peer}, not one of its callers")
    return problems


def check_embedded_vectors_single(manifests: Sequence[Manifest], qdrant_url: bool) -> list[str]:
    """Without a Qdrant server, memory and enrichment run one replica and never overlap."""
    if qdrant_url:
        return []
    problems = []
    autoscaled = {
        m["spec"]["scaleTargetRef"]["name"]
        for m in of_kind(manifests, "HorizontalPodAutoscaler") + of_kind(manifests, "ScaledObject")
    }
    for deployment in of_kind(manifests, "Deployment"):
        if component(deployment) not in ("memory", "enrichment"):
            continue
        name = deployment["metadata"]["name"]
        if deployment["spec"].get("replicas") != 1 or name in autoscaled:
            problems.append(f"{name}: embedded vectors with more than one replica")
        if deployment["spec"].get("strategy", {}).get("type") != "Recreate":
            problems.append(f"{name}: embedded vectors need the Recreate strategy")
    return problems


def chart_values_files() -> list[list[Path]]:
    """Defaults alone, then each values-*.yaml over them."""
    return [[]] + [[path] for path in sorted(CHART.glob("values-*.yaml"))]


def main() -> int:
    """Lint and render the chart with every values file and run every check (make lint)."""
    from tests.support.helm_facts import chart_facts

    helm = helm_binary()
    if helm is None:
        print(f"helm {HELM_VERSION} not built: run deploy/helm/install-helm.sh", file=sys.stderr)
        return 1
    facts = chart_facts()
    problems: list[str] = []
    for values in chart_values_files():
        label = values[0].name if values else "values.yaml"
        try:
            lint(helm, values)
            manifests = render(helm, values)
        except RenderError as exc:
            problems.append(f"{label}: {exc}")
            continue
        merged: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())
        for path in values:
            merged |= yaml.safe_load(path.read_text())
        found = (
            check_probes_and_resources(manifests)
            + check_consumer_groups(manifests, facts.consumers, str(merged.get("topicPrefix", "")))
            + check_no_secret_in_config_maps(manifests)
            + check_network_policies(manifests, facts.internal_callers)
            + check_embedded_vectors_single(manifests, bool(merged["qdrant"].get("url")))
        )
        problems += [f"{label}: {problem}" for problem in found]
        print(f"[engram] chart: {label}: {len(manifests)} manifests, {len(found)} problems")
    for problem in problems:
        print(f"[engram] chart: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
