"""The deployment files in deploy/ say what docs/deploy.md says: a non-root image running
``runvil mcp --http 0.0.0.0:8765``, three replicas sharing one Redis behind a balancer, probes on
``/healthz`` and ``/readyz``, a CPU autoscaler. No container engine runs in the tests: the files
are parsed and their key facts checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from runvil._faces.mcp_http import check_allowed_hosts

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text(encoding="utf-8")) if d]


def by_kind(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def test_the_image_is_slim_non_root_and_serves_http() -> None:
    lines = [
        line.strip() for line in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines[0] == "FROM python:3.12-slim"
    assert 'RUN pip install ".[fleet]" \\' in lines
    assert "USER 10001:10001" in lines
    assert lines[-2:] == ['ENTRYPOINT ["runvil"]', 'CMD ["mcp", "--http", "0.0.0.0:8765"]']
    assert lines.index("USER 10001:10001") > max(
        i for i, line in enumerate(lines) if line.startswith("RUN ")
    ), "nothing runs as root after the user is set"


def test_compose_runs_three_replicas_on_one_redis_behind_a_balancer() -> None:
    (compose,) = documents("compose.yaml")
    services = compose["services"]
    assert set(services) == {"redis", "runvil", "balancer"}
    runvil = services["runvil"]
    assert runvil["deploy"]["replicas"] == 3
    assert runvil["command"] == ["mcp", "--http", "0.0.0.0:8765"]
    assert runvil["environment"]["RUNVIL_MCP_STATE"] == "redis://redis:6379/0"
    # Behind nginx every client is one peer: the per-peer limit is the total.
    assert runvil["environment"]["RUNVIL_MCP_SESSIONS_PER_PEER"] == "1024"
    assert "/readyz" in " ".join(runvil["healthcheck"]["test"])
    assert services["balancer"]["ports"] == ["8765:8765"]
    assert services["redis"]["command"][:3] == ["redis-server", "--save", ""]
    nginx = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
    assert "server runvil:8765;" in nginx
    assert "proxy_set_header Host $http_host;" in nginx, "the replicas check the client's Host"
    assert runvil["environment"]["RUNVIL_MCP_ALLOWED_HOSTS"] == "balancer runvil"


def test_kubernetes_probes_user_command_and_autoscaler() -> None:
    docs = documents("kubernetes/runvil.yaml")
    deployment = by_kind(docs, "Deployment", "runvil")
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert deployment["spec"]["replicas"] == 3
    assert container["args"] == ["mcp", "--http", "0.0.0.0:8765"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] == 10001
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert spec["terminationGracePeriodSeconds"] > 25, "longer than the drain"
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
    assert env["RUNVIL_MCP_STATE"] == "redis://runvil-redis:6379/0"
    assert env["POD_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["RUNVIL_MCP_ALLOWED_HOSTS"].split() == [
        "runvil", "runvil.$(POD_NAMESPACE)", "runvil.$(POD_NAMESPACE).svc",
        "runvil.$(POD_NAMESPACE).svc.cluster.local",
    ]
    # What Kubernetes makes of it in namespace "tools" is a valid setting.
    expanded = env["RUNVIL_MCP_ALLOWED_HOSTS"].replace("$(POD_NAMESPACE)", "tools").split()
    assert check_allowed_hosts(tuple(expanded), "RUNVIL_MCP_ALLOWED_HOSTS") == tuple(expanded)
    service = by_kind(docs, "Service", "runvil")
    assert service["spec"]["ports"][0]["port"] == 8765
    hpa = by_kind(docs, "HorizontalPodAutoscaler", "runvil")
    assert hpa["spec"]["scaleTargetRef"]["name"] == "runvil"
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    assert hpa["spec"]["minReplicas"] == 3
    redis = documents("kubernetes/redis.yaml")
    assert by_kind(redis, "Service", "runvil-redis")["spec"]["ports"][0]["port"] == 6379
    redis_spec = by_kind(redis, "Deployment", "runvil-redis")["spec"]["template"]["spec"]
    assert redis_spec["securityContext"]["runAsNonRoot"] is True
