"""deploy/k8s runs as shipped: kustomize builds it, Kubernetes' schemas accept it strictly, its
pods pass the "restricted" Pod Security Standard, and what it leaves to the operator (Secrets)
it never writes. The Dockerfile passes hadolint, the Prometheus files promtool."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from steadfast.cli import build_parser
from steadfast.services.gateway.adapters.local_models import BUNDLED_MODELS
from steadfast.services.gateway.domain.routes import load_routes
from steadfast.shared.app import READINESS_TIMEOUT_S
from steadfast.shared.settings import SERVICE_NAMES, SERVICE_PORTS

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
PUBLIC = {"evaluator", "gateway"}
WITH_DATABASE = {"evaluator", "gateway"}
#: volume types the restricted Pod Security Standard allows
RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def tool(name: str) -> str:
    """A command the dev extra installs into the environment's bin (kubectl, hadolint...)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def run(*command: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


def built(directory: Path) -> str:
    done = run(tool("kubectl"), "kustomize", str(directory))
    assert done.returncode == 0, done.stderr
    return done.stdout


def documents(directory: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(built(directory)) if d]


@pytest.fixture(scope="module")
def base() -> list[dict[str, Any]]:
    return documents(K8S)


def of_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def pod_specs(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    workloads = ("Deployment", "StatefulSet", "Job", "DaemonSet")
    return {
        f"{d['kind']}/{d['metadata']['name']}": d["spec"]["template"]["spec"]
        for d in docs
        if d["kind"] in workloads
    }


def validate(manifests: str) -> subprocess.CompletedProcess[str]:
    return run(tool("kubernetes-validate"), "--strict", "--quiet", "/dev/stdin", stdin=manifests)


@pytest.mark.parametrize("directory", ["", "try-postgres"])
def test_the_kustomizations_build_and_pass_strict_schema_validation(directory: str) -> None:
    done = validate(built(K8S / directory))
    assert done.returncode == 0, done.stdout + done.stderr


def test_strict_validation_would_catch_a_misspelt_field() -> None:
    manifests = built(K8S).replace("readinessProbe:", "readynessProbe:", 1)
    assert validate(manifests).returncode != 0


def test_every_pod_passes_the_restricted_pod_security_standard(base: list[dict[str, Any]]) -> None:
    trial = documents(K8S / "try-postgres")
    specs = pod_specs(base) | pod_specs(trial)
    assert len(specs) == 7  # five services, the migrations Job, the trial PostgreSQL
    for name, spec in specs.items():
        assert restricted_violations(spec) == [], name


def restricted_violations(spec: dict[str, Any]) -> list[str]:
    """What in a pod spec the restricted level refuses (the checks of the Pod Security
    Standards that a manifest can fail)."""
    found = [key for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    for volume in spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            found.append(f"volume {volume['name']}: {kinds}")
    pod = spec.get("securityContext", {})
    for container in spec.get("initContainers", []) + spec["containers"]:
        found += [f"{container['name']}: {v}" for v in container_violations(container, pod)]
    return found


def container_violations(container: dict[str, Any], pod: dict[str, Any]) -> list[str]:
    context = container.get("securityContext", {})
    capabilities = context.get("capabilities", {})
    seccomp = context.get("seccompProfile", pod.get("seccompProfile", {}))
    checks = {
        "privileged": bool(context.get("privileged")),
        "allowPrivilegeEscalation not false": context.get("allowPrivilegeEscalation") is not False,
        "capabilities not dropped": capabilities.get("drop") != ["ALL"],
        "capabilities added": bool(set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}),
        "may run as root": not (context.get("runAsNonRoot") or pod.get("runAsNonRoot")),
        "runs as uid 0": context.get("runAsUser", pod.get("runAsUser")) == 0,
        "no seccomp profile": seccomp.get("type") not in ("RuntimeDefault", "Localhost"),
        "hostPort": any("hostPort" in port for port in container.get("ports", [])),
    }
    return [violation for violation, present in checks.items() if present]


def test_the_restricted_check_finds_what_it_is_for() -> None:
    spec = {
        "hostNetwork": True,
        "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
        "containers": [{"name": "c", "securityContext": {"privileged": True}}],
    }
    found = " ".join(restricted_violations(spec))
    for expected in ("hostNetwork", "hostPath", "privileged", "capabilities", "root", "seccomp"):
        assert expected in found


def test_the_namespace_enforces_the_restricted_level(base: list[dict[str, Any]]) -> None:
    labels = of_kind(base, "Namespace")["steadfast"]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_no_secret_is_written_by_the_manifests(base: list[dict[str, Any]]) -> None:
    assert of_kind(base, "Secret") == {}
    referenced = {
        ref["secretRef"]["name"]
        for spec in pod_specs(base).values()
        for container in spec.get("initContainers", []) + spec["containers"]
        for ref in container.get("envFrom", [])
        if "secretRef" in ref
    }
    assert referenced == {"steadfast-database", "steadfast-internal", "steadfast-providers"}
    example = (K8S / "base" / "secrets.example.env").read_text()
    for name in referenced:
        assert f"create secret generic {name}" in example


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_each_service_has_probes_a_disruption_budget_and_its_port(
    base: list[dict[str, Any]], service: str
) -> None:
    deployment = of_kind(base, "Deployment")[service]
    spec = deployment["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert container["args"] == [service]
    assert container["image"] == "steadfast:latest"  # from the kustomization's images:
    assert container["ports"] == [{"name": "http", "containerPort": SERVICE_PORTS[service]}]
    assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # longer than /readyz's own 3 s per check: a slow peer must not time the probe out
    assert container["readinessProbe"]["timeoutSeconds"] > READINESS_TIMEOUT_S
    assert "replicas" not in deployment["spec"]  # the autoscaler's to set
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    budget = of_kind(base, "PodDisruptionBudget")[service]
    assert budget["spec"]["minAvailable"] == 1
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert of_kind(base, "Service")[service]["spec"]["ports"][0]["port"] == SERVICE_PORTS[service]


@pytest.mark.parametrize("service", SERVICE_NAMES)
def test_every_service_reads_the_internal_token(base: list[dict[str, Any]], service: str) -> None:
    """The pods listen beyond 127.0.0.1: the services answer only each other's calls."""
    container = of_kind(base, "Deployment")[service]["spec"]["template"]["spec"]["containers"][0]
    internal = [
        ref["secretRef"]
        for ref in container["envFrom"]
        if ref.get("secretRef", {}).get("name") == "steadfast-internal"
    ]
    assert internal == [{"name": "steadfast-internal"}]  # required, not optional
    example = (K8S / "base" / "secrets.example.env").read_text()
    assert "STEADFAST_INTERNAL_TOKEN=" in example


def test_an_overlay_sets_every_container_s_image_through_images(tmp_path: Path) -> None:
    kustomization = yaml.safe_load((K8S / "base" / "kustomization.yaml").read_text())
    assert [entry["name"] for entry in kustomization["images"]] == ["steadfast"]
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    base = os.path.relpath(K8S / "base", overlay)
    (overlay / "kustomization.yaml").write_text(
        f"resources: [{base}]\n"
        "images: [{name: steadfast, newName: registry.example/steadfast, newTag: '1'}]\n"
    )
    images = {
        container["image"]
        for spec in pod_specs(documents(overlay)).values()
        for container in spec.get("initContainers", []) + spec["containers"]
    }
    assert images == {"registry.example/steadfast:1"}


def test_only_the_evaluator_and_the_gateway_are_reachable_from_outside(
    base: list[dict[str, Any]],
) -> None:
    policies = of_kind(base, "NetworkPolicy").values()
    selected_by_all = [p for p in policies if p["spec"]["podSelector"] == {}]
    assert selected_by_all and all("Ingress" in p["spec"]["policyTypes"] for p in selected_by_all)
    open_to_all = set()
    for service in SERVICE_NAMES:
        labels = {"app.kubernetes.io/component": service}
        for policy in policies:
            if selects(policy["spec"]["podSelector"], labels) and any(
                "from" not in rule for rule in policy["spec"].get("ingress", [])
            ):
                open_to_all.add(service)
    assert open_to_all == PUBLIC


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        if (
            expression["operator"] != "In"
            or labels.get(expression["key"]) not in expression["values"]
        ):
            return False
    return True


def test_migrations_run_in_a_job_the_services_wait_for(base: list[dict[str, Any]]) -> None:
    config = of_kind(base, "ConfigMap")["steadfast-config"]["data"]
    assert config["STEADFAST_MIGRATE_ON_START"] == "false"
    # both services reachable from outside ask for keys
    assert config["STEADFAST_EVALUATOR_AUTH"] == config["STEADFAST_GATEWAY_AUTH"] == "keys"
    job = of_kind(base, "Job")["steadfast-migrate"]["spec"]["template"]["spec"]["containers"][0]
    parser = build_parser()
    assert parser.parse_args(job["command"][1:]).handler.__name__ == "command_migrate"
    for name, deployment in of_kind(base, "Deployment").items():
        init = deployment["spec"]["template"]["spec"].get("initContainers", [])
        if name not in WITH_DATABASE:
            assert init == []
            continue
        args = parser.parse_args(init[0]["command"][1:])
        assert (args.check, args.service, args.wait > 0) == (True, [name], True)


def test_the_gateway_reads_its_routes_from_the_config_map(base: list[dict[str, Any]]) -> None:
    routes = load_routes(K8S / "base" / "routes.toml")
    assert {route.model for route in routes.values()} <= set(BUNDLED_MODELS)
    spec = of_kind(base, "Deployment")["gateway"]["spec"]["template"]["spec"]
    container = spec["containers"][0]
    path = next(e["value"] for e in container["env"] if e["name"] == "STEADFAST_MODELS_FILE")
    mount = next(m for m in container["volumeMounts"] if path.startswith(m["mountPath"]))
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    generated = of_kind(base, "ConfigMap")[volume["configMap"]["name"]]
    assert generated["metadata"]["name"].startswith("steadfast-routes-")
    assert generated["data"]["routes.toml"] == (K8S / "base" / "routes.toml").read_text()


def test_the_trial_postgres_is_labelled_as_such_and_the_base_has_none(
    base: list[dict[str, Any]],
) -> None:
    assert "StatefulSet" not in {d["kind"] for d in base}
    assert "FOR TRYING" in (K8S / "try-postgres" / "kustomization.yaml").read_text()
    trial = documents(K8S / "try-postgres")
    secret = of_kind(trial, "Secret")
    assert any(name.startswith("steadfast-database") for name in secret)


def test_the_optional_service_monitor_scrapes_as_the_alerts_job() -> None:
    monitor = documents(K8S / "monitoring")[0]
    assert monitor["kind"] == "ServiceMonitor"
    alerts = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    assert 'job="steadfast"' in alerts
    endpoint = monitor["spec"]["endpoints"][0]
    assert {"targetLabel": "job", "replacement": "steadfast"} in endpoint["relabelings"]
    assert set(monitor["spec"]["selector"]["matchExpressions"][0]["values"]) == set(SERVICE_NAMES)


def test_the_dockerfile_passes_hadolint_and_prepares_the_models_once() -> None:
    done = run(tool("hadolint"), str(DEPLOY / "Dockerfile"))
    assert done.returncode == 0, done.stdout + done.stderr
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "steadfast models prepare --dir /opt/steadfast-models" in dockerfile
    assert "STEADFAST_GATEWAY_MODELS_DIR=/opt/steadfast-models" in dockerfile
    assert "USER 10001" in dockerfile  # numeric: runAsNonRoot can check it


@pytest.mark.parametrize(
    "check",
    # the configuration names the rules where compose mounts them: its syntax is checked here,
    # the rules file on its own
    ["check config --syntax-only prometheus.yml", "check rules alerts.yml"],
    ids=["config", "rules"],
)
def test_promtool_accepts_the_prometheus_files(check: str) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("STEADFAST_REQUIRE_PROMTOOL"):
            pytest.fail("promtool is not installed (apt-get install prometheus)")
        pytest.skip("promtool is not installed (./dev.sh test installs it)")
    done = subprocess.run(
        [promtool, *shlex.split(check)],
        cwd=DEPLOY / "prometheus",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_docker_compose_accepts_the_compose_file() -> None:
    docker = shutil.which("docker")
    if docker is None or run(docker, "compose", "version").returncode != 0:
        pytest.skip("no docker compose client on this machine")
    done = run(docker, "compose", "-f", str(DEPLOY / "compose.yaml"), "config", "--quiet")
    assert done.returncode == 0, done.stderr
