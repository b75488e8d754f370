"""deploy/helm/engram renders what the code needs, and the checks that say so can fail.

Renders with the helm `make lint` builds into .engram/cache/ (deploy/helm/install-helm.sh).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from engram_events import ALL_TOPICS, COMPACTED_TOPICS
from tests.support import helm_chart as chart
from tests.support.helm_facts import ServiceFacts, chart_facts, settings_env_names

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
PRODUCTION = chart.CHART / "values-production.yaml"
QDRANT = "qdrant.url=http://qdrant:6333"


@pytest.fixture(scope="module")
def helm() -> Path:
    binary = chart.helm_binary()
    if binary is None:
        pytest.skip(
            f"helm {chart.HELM_VERSION} is not in .engram/cache/: `make helm` (or `make lint`, "
            "which CI runs first) builds it with go install"
        )
    return binary


@pytest.fixture(scope="module")
def facts() -> ServiceFacts:
    return chart_facts()


@pytest.fixture(scope="module")
def default(helm: Path) -> list[chart.Manifest]:
    return chart.render(helm)


@pytest.fixture(scope="module")
def production(helm: Path) -> list[chart.Manifest]:
    return chart.render(helm, [PRODUCTION])


def by_component(manifests: list[chart.Manifest], kind: str) -> dict[str, chart.Manifest]:
    return {chart.component(m): m for m in chart.of_kind(manifests, kind)}


def all_checks(
    manifests: list[chart.Manifest], facts: ServiceFacts, prefix: str = "", qdrant: bool = False
) -> list[str]:
    return (
        chart.check_probes_and_resources(manifests)
        + chart.check_consumer_groups(manifests, facts.consumers, prefix)
        + chart.check_no_secret_in_config_maps(manifests)
        + chart.check_network_policies(manifests, facts.internal_callers)
        + chart.check_embedded_vectors_single(manifests, qdrant)
    )


def test_lint_strict_with_each_values_file(helm: Path) -> None:
    for values in chart.chart_values_files():
        chart.lint(helm, values)


def test_default_values_hold_every_invariant(
    default: list[chart.Manifest], facts: ServiceFacts
) -> None:
    assert all_checks(default, facts) == []


def test_production_values_hold_every_invariant(
    production: list[chart.Manifest], facts: ServiceFacts
) -> None:
    assert all_checks(production, facts, qdrant=True) == []
    scaled = by_component(production, "ScaledObject")
    assert set(scaled) == facts.consumers - {"gateway"}, "KEDA for every consumer but the HTTP edge"
    assert set(by_component(production, "HorizontalPodAutoscaler")) == {"gateway", "mcp"}


def test_a_prefix_reaches_every_group_and_topic(helm: Path, facts: ServiceFacts) -> None:
    manifests = chart.render(helm, sets=["topicPrefix=staging.", "keda.enabled=true", QDRANT])
    assert chart.check_consumer_groups(manifests, facts.consumers, "staging.") == []
    assert chart.check_consumer_groups(manifests, facts.consumers, "") != []


def test_every_make_run_service_has_a_deployment_on_its_port(
    default: list[chart.Manifest], facts: ServiceFacts
) -> None:
    deployments = by_component(default, "Deployment")
    assert set(deployments) == set(facts.names)
    services = by_component(default, "Service")
    for name in facts.names:
        container = chart.containers(deployments[name])[0]
        assert container["ports"][0]["containerPort"] == facts.ports[name], name
        assert services[name]["spec"]["ports"][0]["port"] == facts.ports[name], name
        env = chart.container_env(default, container)
        assert env[f"ENGRAM_{name.upper()}_HOST"] == "0.0.0.0"
        assert env[f"ENGRAM_{name.upper()}_PORT"] == str(facts.ports[name])


def test_gateway_and_mcp_find_the_services_they_call(
    default: list[chart.Manifest], facts: ServiceFacts
) -> None:
    deployments = by_component(default, "Deployment")
    gateway = chart.container_env(default, chart.containers(deployments["gateway"])[0])
    for upstream in facts.internal_callers:
        url = gateway[f"ENGRAM_GATEWAY_{upstream.upper()}_URL"]
        assert url == f"http://engram-{upstream}:{facts.ports[upstream]}"
    mcp = chart.container_env(default, chart.containers(deployments["mcp"])[0])
    assert mcp["ENGRAM_MCP_TRANSPORT"] == "http"
    assert mcp["ENGRAM_MCP_GATEWAY_URL"] == f"http://engram-gateway:{facts.ports['gateway']}"


def secret_refs(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        item["name"]: item["valueFrom"]["secretKeyRef"]
        for item in container.get("env") or []
        if "secretKeyRef" in item.get("valueFrom", {})
    }


def test_secrets_reach_only_the_services_that_read_them(default: list[chart.Manifest]) -> None:
    deployments = by_component(default, "Deployment")
    for name, deployment in deployments.items():
        refs = secret_refs(chart.containers(deployment)[0])
        if name == "mcp":
            assert refs == {}, "the MCP server is a gateway client: no token, no database"
            continue
        for required in ("ENGRAM_INTERNAL_TOKEN", "MONGODB_URI"):
            assert refs[required] == {"name": "engram-secrets", "key": required}
        llm_keys = {key for key in refs if key.endswith("_API_KEY") and key != "QDRANT_API_KEY"}
        assert all(key.startswith(f"ENGRAM_{name.upper()}_") for key in llm_keys), name
    assert "QDRANT_API_KEY" in secret_refs(chart.containers(deployments["memory"])[0])


def test_an_existing_secret_replaces_the_rendered_one(helm: Path) -> None:
    manifests = chart.render(helm, sets=["secrets.existingSecret=vault-engram"])
    assert chart.of_kind(manifests, "Secret") == []
    gateway = by_component(manifests, "Deployment")["gateway"]
    refs = secret_refs(chart.containers(gateway)[0])
    assert {ref["name"] for ref in refs.values()} == {"vault-engram"}


def test_secret_values_stay_out_of_config_maps(helm: Path) -> None:
    secrets = {
        "secrets.internalToken": "tok-3f9a6c",
        "secrets.mongodbUri": "mongodb://engram:pw-77e1@m0:27017/?replicaSet=rs0&w=majority",
        "secrets.qdrantApiKey": "qk-51d0",
        "secrets.memoryLlmApiKey": "sk-mem-0b2",
        "secrets.enrichmentSummaryApiKey": "sk-sum-9c4",
    }
    manifests = chart.render(helm, sets=[f"{k}={v}" for k, v in secrets.items()])
    assert chart.secret_values(manifests) >= set(secrets.values())
    assert chart.check_no_secret_in_config_maps(manifests, secrets.values()) == []


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["services.memory.replicas=2"], "services.memory: more than one replica"),
        (["services.enrichment.replicas=3"], "services.enrichment: more than one replica"),
        (["keda.enabled=true"], "needs qdrant.url"),
        (["services.extraction.env.ENGRAM_EXTRACTION_LLM_API_KEY=sk-1"], "looks like a secret"),
        (["services.search.enabled=true"], "no such Engram service"),
        (["kafka.topics.strimzi.enabled=true"], "kafka.topics.strimzi.cluster"),
    ],
)
def test_rendering_refuses(helm: Path, sets: list[str], message: str) -> None:
    with pytest.raises(chart.RenderError, match=re.escape(message)):
        chart.render(helm, sets=sets)


def test_a_qdrant_server_lets_memory_and_enrichment_scale(helm: Path, facts: ServiceFacts) -> None:
    sets = [QDRANT, "services.memory.replicas=3", "services.enrichment.replicas=2"]
    manifests = chart.render(helm, sets=sets)
    deployments = by_component(manifests, "Deployment")
    assert deployments["memory"]["spec"]["replicas"] == 3
    assert deployments["memory"]["spec"]["strategy"]["type"] == "RollingUpdate"
    env = chart.container_env(manifests, chart.containers(deployments["memory"])[0])
    assert env["QDRANT_URL"] == "http://qdrant:6333"
    assert "ENGRAM_MEMORY_VECTOR_PATH" not in env
    assert all_checks(manifests, facts, qdrant=True) == []


def test_strimzi_topics_are_the_contract(helm: Path) -> None:
    sets = ["kafka.topics.strimzi.enabled=true", "kafka.topics.strimzi.cluster=k", "topicPrefix=p."]
    topics = chart.of_kind(chart.render(helm, sets=sets), "KafkaTopic")
    names = {t["spec"]["topicName"] for t in topics}
    assert names == {f"p.{base}" for base in ALL_TOPICS}
    for topic in topics:
        config = topic["spec"]["config"]
        compacted = topic["spec"]["topicName"].removeprefix("p.") in COMPACTED_TOPICS
        assert (config.get("cleanup.policy") == "compact") == compacted
        assert config["min.insync.replicas"] == "2" and topic["spec"]["replicas"] == 3


def test_the_makefile_builds_the_helm_this_test_uses() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert f"HELM_VERSION := {chart.HELM_VERSION}\n" in makefile
    assert re.search(r"^lint: .*chart-lint", makefile, re.M)


# The checks themselves: each is shown a manifest broken in the way it exists to catch.


def container_of(manifests: list[chart.Manifest], service: str) -> dict[str, Any]:
    return chart.containers(by_component(manifests, "Deployment")[service])[0]


def test_a_missing_probe_or_limit_is_caught(default: list[chart.Manifest]) -> None:
    broken = copy.deepcopy(default)
    del container_of(broken, "embedding")["readinessProbe"]
    container_of(broken, "gateway")["livenessProbe"]["httpGet"]["path"] = "/"
    del container_of(broken, "memory")["resources"]["limits"]
    problems = chart.check_probes_and_resources(broken)
    assert len(problems) == 3, problems


def test_a_secret_in_a_config_map_is_caught(default: list[chart.Manifest]) -> None:
    token = next(iter(chart.secret_values(default)))
    broken = copy.deepcopy(default)
    maps = chart.of_kind(broken, "ConfigMap")
    maps[0]["data"]["SOMETHING"] = f"prefix-{token}"
    maps[1]["data"]["ENGRAM_MEMORY_LLM_API_KEY"] = "sk-x"
    maps[2]["data"]["URL"] = "mongodb://u:p@host/"
    container_of(broken, "ingest")["env"].append({"name": "ENGRAM_INTERNAL_TOKEN", "value": "t"})
    problems = chart.check_no_secret_in_config_maps(broken)
    assert len(problems) == 4, problems


def test_an_open_or_missing_network_policy_is_caught(
    default: list[chart.Manifest], facts: ServiceFacts
) -> None:
    broken = copy.deepcopy(default)
    policies = by_component(broken, "NetworkPolicy")
    broken.remove(policies["extraction"])
    policies["memory"]["spec"]["ingress"].append({"ports": [{"port": "http"}]})
    policies["embedding"]["spec"]["ingress"] = [{"from": [{"podSelector": {}}]}]
    problems = chart.check_network_policies(broken, facts.internal_callers)
    assert any("engram-extraction: no NetworkPolicy" in p for p in problems), problems
    assert any("memory" in p and "admits any source" in p for p in problems), problems
    assert any(p.startswith("embedding: admits") for p in problems), problems


def test_a_wrong_consumer_group_is_caught(
    default: list[chart.Manifest], facts: ServiceFacts
) -> None:
    broken = copy.deepcopy(default)
    deployment = by_component(broken, "Deployment")["ingest"]
    deployment["metadata"]["annotations"][chart.CONSUMER_GROUP_ANNOTATION] = "ingest"
    problems = chart.check_consumer_groups(broken, facts.consumers, "")
    assert problems == ["ingest: consumer group annotation 'ingest', want 'engram-ingest'"]


def test_scaled_embedded_vectors_are_caught(default: list[chart.Manifest]) -> None:
    broken = copy.deepcopy(default)
    by_component(broken, "Deployment")["enrichment"]["spec"]["replicas"] = 2
    assert chart.check_embedded_vectors_single(broken, qdrant_url=False) != []
    assert chart.check_embedded_vectors_single(broken, qdrant_url=True) == []


KAFKA_SASL = [
    "kafka.securityProtocol=SASL_SSL",
    "kafka.sasl.mechanism=SCRAM-SHA-512",
    "kafka.sasl.username=engram",
    "kafka.tls.existingSecret=kafka-ca",
    "kafka.tls.clientCertificate=true",
]


def test_every_variable_the_chart_sets_is_read_by_the_service(
    helm: Path, facts: ServiceFacts
) -> None:
    sets = [*KAFKA_SASL, "otlpEndpoint=http://o:4318"]
    manifests = chart.render(helm, [PRODUCTION], sets)
    for name, deployment in by_component(manifests, "Deployment").items():
        container = chart.containers(deployment)[0]
        given = set(chart.container_env(manifests, container)) | set(secret_refs(container))
        known = settings_env_names(name)
        assert given - known == set(), f"{name} does not read {sorted(given - known)}"


def test_kafka_security_reaches_every_platform_pod(helm: Path, facts: ServiceFacts) -> None:
    sets = [*KAFKA_SASL, "secrets.kafkaSaslPassword=pw-41c2"]
    manifests = chart.render(helm, sets=sets)
    assert chart.check_no_secret_in_config_maps(manifests, ["pw-41c2"]) == []
    for name, deployment in by_component(manifests, "Deployment").items():
        container = chart.containers(deployment)[0]
        env = chart.container_env(manifests, container)
        if name == "mcp":
            assert not any(key.startswith("KAFKA_") for key in env), "MCP has no Kafka client"
            continue
        assert env["KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"
        assert env["KAFKA_SASL_MECHANISM"] == "SCRAM-SHA-512"
        assert env["KAFKA_SASL_USERNAME"] == "engram"
        assert secret_refs(container)["KAFKA_SASL_PASSWORD"]["key"] == "KAFKA_SASL_PASSWORD"
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        tls_dir = mounts["kafka-tls"]["mountPath"]
        assert mounts["kafka-tls"]["readOnly"] is True
        assert env["KAFKA_SSL_CAFILE"] == f"{tls_dir}/ca.crt"
        assert env["KAFKA_SSL_CERTFILE"] == f"{tls_dir}/tls.crt"
        assert env["KAFKA_SSL_KEYFILE"] == f"{tls_dir}/tls.key"
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        assert volumes["kafka-tls"]["secret"]["secretName"] == "kafka-ca"
    secret = chart.of_kind(manifests, "Secret")[0]
    assert secret["stringData"]["KAFKA_SASL_PASSWORD"] == "pw-41c2"


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        (["kafka.securityProtocol=SASL_PLAINTEXT"], "needs kafka.sasl.mechanism"),
        (
            [
                "kafka.securityProtocol=SASL_SSL",
                "kafka.sasl.mechanism=PLAIN",
                "kafka.sasl.username=u",
            ],
            "needs secrets.kafkaSaslPassword",
        ),
        (["kafka.sasl.mechanism=PLAIN"], "need kafka.securityProtocol SASL_PLAINTEXT or SASL_SSL"),
        (["secrets.kafkaSaslPassword=p"], "need kafka.securityProtocol SASL_PLAINTEXT"),
        (["kafka.securityProtocol=TLS"], "one of PLAINTEXT, SSL"),
        (
            ["kafka.securityProtocol=SSL", "kafka.sasl.mechanism=GSSAPI"],
            "one of PLAIN, SCRAM-SHA-256",
        ),
        (["kafka.tls.existingSecret=ca"], "kafka.tls.existingSecret needs kafka.securityProtocol"),
        (["kafka.securityProtocol=SSL", "kafka.tls.clientCertificate=true"], "needs kafka.tls.ex"),
    ],
)
def test_rendering_refuses_kafka_security_that_cannot_work(
    helm: Path, sets: list[str], message: str
) -> None:
    with pytest.raises(chart.RenderError, match=re.escape(message)):
        chart.render(helm, sets=sets)


def test_volumes_one_pod_holds_are_never_shared_in_a_rollout(
    production: list[chart.Manifest], default: list[chart.Manifest]
) -> None:
    connectors = by_component(production, "Deployment")["connectors"]
    assert connectors["spec"]["strategy"]["type"] == "Recreate"
    env = chart.container_env(production, chart.containers(connectors)[0])
    assert env["ENGRAM_CONNECTORS_DROP_ROOT"] == "/var/lib/engram/drop"
    claims = {c["metadata"]["name"] for c in chart.of_kind(production, "PersistentVolumeClaim")}
    assert claims == {"engram-connectors-drop"}
    rolling = by_component(default, "Deployment")["gateway"]["spec"]["strategy"]
    assert rolling == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
