"""The test seam of the CLI and the MCP server: a fake network read from a JSON file.

Why: the faces run as separate processes (an MCP client spawns ``runvil mcp``; a test spawns
``runvil fetch``), so a test cannot hand them a :class:`~runvil.web.Network` object. When — and
only when — the environment variable ``RUNVIL_TEST_NETWORK`` names a JSON file, the faces build
their network from it instead of the real one::

    {
      "dns": {"example.com": ["93.184.216.34"]},
      "routes": {"93.184.216.34:443": "127.0.0.1:40123"},
      "default_route": "127.0.0.1:40999",
      "ca_file": "/tmp/ca.pem",
      "policy": {"timeout": 1.0, "connect_timeout": 0.5}
    }

A name missing from ``dns`` fails its lookup (``DnsError``); an approved address missing from
``routes`` is dialled at ``default_route`` (a test points it at its canary listener); ``ca_file``
is the only trusted CA; ``policy`` overrides FetchPolicy fields. The address policy still judges
every answer before the route map is consulted, exactly as with the real network. Nothing here
is read when the variable is unset, and it is documented in docs/configuration.md as a test seam,
not a feature.
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runvil.web import DnsError, Network

ENV_VAR = "RUNVIL_TEST_NETWORK"


@dataclass(frozen=True)
class TestSeam:
    """What the seam file describes: the network and any policy overrides."""

    network: Network
    policy: Mapping[str, Any]


def _hostport(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def seam_from_env(env: Mapping[str, str] | None = None) -> TestSeam | None:
    """The test network when ``RUNVIL_TEST_NETWORK`` is set, else None (the real network)."""
    env = os.environ if env is None else env
    path = env.get(ENV_VAR)
    if not path:
        return None
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    dns: dict[str, list[str]] = {str(k): [str(a) for a in v] for k, v in spec["dns"].items()}
    routes = {_hostport(k): _hostport(v) for k, v in spec.get("routes", {}).items()}
    default_route = _hostport(spec["default_route"])
    ctx = ssl.create_default_context(cafile=spec["ca_file"])

    async def resolve(host: str) -> list[str]:
        if host not in dns:
            raise DnsError(host)
        return list(dns[host])

    def route(ip: str, port: int) -> tuple[str, int]:
        return routes.get((ip, port), default_route)

    return TestSeam(
        network=Network(resolve=resolve, route=route, ssl_context=ctx),
        policy=dict(spec.get("policy", {})),
    )
