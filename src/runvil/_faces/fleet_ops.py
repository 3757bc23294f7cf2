"""What an operator's platform asks of ``runvil mcp --http``: is it alive, is it ready, what is
it doing, and stopping without dropping calls.

* ``GET /healthz``: 200 ``ok`` while the process serves HTTP at all (a liveness probe);
* ``GET /readyz``: 200 ``ready``, or 503 with the reason: the server is draining (SIGTERM), or
  the shared state (``--state``) does not answer a ``PING`` within its timeout. A load balancer
  sends no new requests to a replica that is not ready; it turns ready again by itself;
* ``GET /metrics``: the Prometheus text format (``prometheus-client``, the ``fleet`` extra):
  tool calls by tool and outcome, their latency, the render gate (bytes in use, renderings
  waiting), the PDF conversions queued, the errors talking to Redis.

These paths answer before the MCP app, behind the same Host/Origin guard (a probe addresses the
replica by its IP address, which the guard accepts on a wildcard bind).

**Draining.** On SIGTERM uvicorn stops accepting connections and waits up to its graceful
timeout for the requests in flight to finish; :attr:`Operations.draining` turns readiness false
from the signal on, so a load balancer still probing stops sending before the socket closes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from runvil._faces.fleet_state import SharedState

__all__ = ["CallMetrics", "Operations"]

#: The paths this layer answers.
PATHS = ("/healthz", "/readyz", "/metrics")


class CallMetrics:
    """The server's Prometheus metrics, in a registry of its own."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry(auto_describe=True)
        self.calls = Counter(
            "runvil_tool_calls", "Tool calls answered, by tool and outcome "
            "(ok, error: a hard failure, busy: refused at the server's limits, "
            "state_down: the shared state was unreachable).",
            ["tool", "outcome"], registry=self.registry,
        )
        self.latency = Histogram(
            "runvil_tool_call_seconds", "Seconds from a tool call's arrival to its answer.",
            ["tool"], registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30),
        )
        self.redis_errors = Counter(
            "runvil_redis_errors", "Operations on the shared state (Redis) that failed.",
            registry=self.registry,
        )
        self.registry.register(_GateCollector())

    def observe(self, tool: str, outcome: str, seconds: float) -> None:
        self.calls.labels(tool, outcome).inc()
        self.latency.labels(tool).observe(seconds)

    def redis_error(self) -> None:
        self.redis_errors.inc()

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))


class _GateCollector:
    """The render gate and the PDF queue, read when scraped."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        from runvil.web._fetch import pdf, rendering

        gate = rendering.gate
        free = int(getattr(gate, "_free", gate.memory))
        yield GaugeMetricFamily(
            "runvil_render_gate_bytes_in_use",
            "Bytes of the render gate's memory budget held by renderings running now.",
            value=gate.memory - free,
        )
        yield GaugeMetricFamily(
            "runvil_render_gate_waiting", "Renderings waiting for room in the render gate.",
            value=len(getattr(gate, "_waiters", ())),
        )
        queue = getattr(getattr(pdf, "_pool", None), "_work_queue", None)
        yield GaugeMetricFamily(
            "runvil_pdf_queue", "PDF conversions waiting for a worker.",
            value=queue.qsize() if queue is not None else 0,
        )

    def describe(self) -> list[Any]:
        return []


class Operations:
    """ASGI middleware answering :data:`PATHS` (module docstring) before ``app``."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        state: SharedState | None = None,
        metrics: CallMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.state = state
        self.metrics = metrics
        self.draining = False
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path not in PATHS or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        if path == "/healthz":
            response = Response("ok\n", media_type="text/plain")
        elif path == "/readyz":
            reason = await self.not_ready()
            response = (
                Response("ready\n", media_type="text/plain") if reason is None
                else Response(f"not ready: {reason}\n", status_code=503, media_type="text/plain")
            )
        elif self.metrics is None:
            response = Response(
                "metrics need the prometheus-client package (pip install 'runvil[fleet]')\n",
                status_code=404, media_type="text/plain",
            )
        else:
            from prometheus_client import CONTENT_TYPE_LATEST

            response = Response(
                self.metrics.render(), headers={"Content-Type": CONTENT_TYPE_LATEST}
            )
        await response(scope, receive, send)

    async def not_ready(self) -> str | None:
        """Why the replica should get no new requests now, or None when it is ready."""
        if self.draining:
            return "shutting down"
        if self.state is not None and not await self.state.ping():
            return "the shared state (Redis) is unreachable"
        return None


def call_metrics() -> CallMetrics | None:
    """The metrics, or None when ``prometheus-client`` is not installed."""
    try:
        return CallMetrics()
    except ImportError:
        return None
