"""Chat clients for the two wire formats a model role can speak.

``openai`` is the chat-completions format (``POST {base_url}/chat/completions``) that OpenAI and
almost every local or hosted server (vLLM, llama.cpp, Ollama, LM Studio, OpenRouter, ...)
accept; ``anthropic`` is the Messages API (``POST {base_url}/v1/messages``).

Both are spoken over the project's one guarded egress (:mod:`runvil._net`) rather than the
vendors' SDKs: the host needs one request shape per format, and owning the request means one
timeout, one cancellation story and one error vocabulary for both. A :class:`ModelTransport`
holds one run's keep-alive pool; each client may reach only its own configured endpoint (the
operator-endpoints admission rule: any address the configured name resolves to, no redirects,
no proxy, no cookies), and a reply is bounded after decompression (:data:`MAX_REPLY_BYTES`).
Keys never appear in a message, a log line or a ``repr``: anything an endpoint echoes back is
quoted with the key redacted before the quote is cut.

The host keeps conversations in one neutral record shape (the records a prompt sees in its
``messages`` list) and translates at the edge::

    {"role": "system" | "user" | "assistant" | "tool", "content": str,
     "tool_calls": [{"id", "name", "arguments": JSON text}],   # assistant records only
     "tool_call_id": str, "name": str, "is_error": bool}      # tool records only
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from aiohttp import hdrs
from yarl import URL

from runvil._closing import AsyncClosing
from runvil._net import DnsError, Network, NoAllowedAddress, operator_endpoints
from runvil._net.client import EgressClient, Head, ReadPlan, Transport
from runvil._net.decoding import ACCEPT_ENCODING, UnsupportedEncoding
from runvil._net.errors import BodyTooLarge, NetworkError
from runvil._net.proxy import ProxyRefused
from runvil._net.secrets import Secrets
from runvil.prompts._lua import ModelFailure
from runvil.prompts._modelspec import parse_model_spec

__all__ = [
    "ANTHROPIC_VERSION",
    "MAX_REPLY_BYTES",
    "ChatClient",
    "ModelEndpoint",
    "ModelTransport",
    "Reply",
    "ToolCall",
    "endpoint_from_spec",
    "endpoints_from_config",
]

#: The Messages API version header this client speaks.
ANTHROPIC_VERSION = "2023-06-01"
#: Anthropic requires ``max_tokens``; used when the role sets none.
DEFAULT_MAX_TOKENS = 4096
#: How much of an error body a message quotes.
_BODY_QUOTE = 300
#: The largest reply read from a model endpoint, counted after decompression. A chat completion
#: of a 128k-token output is about 1 MB of JSON; the cap leaves room for that many times over,
#: while a broken or hostile endpoint cannot fill memory (or inflate a small compressed body).
MAX_REPLY_BYTES = 16 * 1024 * 1024
#: How much of an error answer is read (its first :data:`_BODY_QUOTE` characters are quoted).
_ERROR_BODY_BYTES = 65_536
#: The ``User-Agent`` of every model request.
USER_AGENT = "runvil-models/0.1"

log = logging.getLogger("runvil.prompts")

Api = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class ModelEndpoint:
    """Where one model role's requests go.

    ``api`` is ``"openai"`` (any chat-completions-compatible server; ``base_url`` ends before
    ``/chat/completions``, e.g. ``https://api.openai.com/v1``) or ``"anthropic"`` (the Messages
    API; ``base_url`` is the API root, e.g. ``https://api.anthropic.com``).
    """

    api: Api
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    #: Seconds for one model request, connection included.
    timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.api not in ("openai", "anthropic"):
            raise ValueError(f"ModelEndpoint.api must be 'openai' or 'anthropic', not {self.api!r}")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError("ModelEndpoint.base_url must be an http:// or https:// URL")
        if not self.model:
            raise ValueError("ModelEndpoint.model must name a model")

    @property
    def url(self) -> str:
        """The request URL for this endpoint's wire format."""
        base = self.base_url.rstrip("/")
        return f"{base}/chat/completions" if self.api == "openai" else f"{base}/v1/messages"


class _ProviderLike(Protocol):
    @property
    def api(self) -> str: ...
    @property
    def base_url(self) -> str: ...
    @property
    def api_key_env(self) -> str | None: ...


class _ConfigLike(Protocol):
    @property
    def models(self) -> Mapping[str, str]: ...
    def model_provider(self, name: str) -> _ProviderLike: ...


def endpoint_from_spec(
    spec: str, config: _ConfigLike, env: Mapping[str, str] | None = None
) -> ModelEndpoint:
    """The endpoint for ``PROVIDER:MODEL`` (``openai:gpt-4o-mini``), the provider looked up in
    ``config`` (built-ins ``openai`` / ``anthropic``, or a ``[providers.NAME]`` table) and its key
    read from the provider's environment variable. Raises ``ValueError`` with a clear message."""
    environ = os.environ if env is None else env
    name, model = parse_model_spec(spec)
    try:
        provider = config.model_provider(name)
    except Exception as err:  # the configuration's own error, or a caller's own lookup error
        raise ValueError(str(err)) from None
    key = environ.get(provider.api_key_env) if provider.api_key_env else None
    if provider.api_key_env and not key:
        raise ValueError(
            f"model provider {name} needs its key in the {provider.api_key_env} "
            "environment variable, which is not set"
        )
    if provider.api not in ("openai", "anthropic"):
        raise ValueError(f"model provider {name} has unknown api {provider.api!r}")
    api: Api = "openai" if provider.api == "openai" else "anthropic"
    return ModelEndpoint(api=api, base_url=provider.base_url, model=model, api_key=key)


def endpoints_from_config(
    config: _ConfigLike,
    env: Mapping[str, str] | None = None,
    *,
    roles: Iterable[str] | None = None,
) -> dict[str, ModelEndpoint]:
    """The roles in ``config.models`` (role -> ``PROVIDER:MODEL``, from flags, ``runvil.toml``
    or the environment) as :class:`ModelEndpoint` objects for :func:`run_prompt`: every role, or
    only those among ``roles`` that are configured (a prompt's roles: a role it does not name is
    never resolved, so a stale setting for another prompt cannot stop this run). This is the one
    place configuration becomes model endpoints; ``runvil run`` uses it too."""
    wanted = config.models if roles is None else [r for r in roles if r in config.models]
    endpoints: dict[str, ModelEndpoint] = {}
    for role in wanted:
        try:
            endpoints[role] = endpoint_from_spec(config.models[role], config, env)
        except ValueError as err:
            raise ValueError(f"model role {role}: {err}") from None
    return endpoints


@dataclass(frozen=True)
class ToolCall:
    """One tool call a model asked for; ``arguments`` is the JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """A model's answer: its text and the tool calls it asked for (empty when it is done)."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()


class ModelTransport(AsyncClosing):
    """The guarded HTTP stack one run's chat clients share: one egress client
    (:mod:`runvil._net.client`) with one keep-alive pool, made inside the running event loop on
    first use and closed with the run (``async with`` or :meth:`aclose`).

    ``network`` is the seam of :mod:`runvil._net` (default: the system resolver, the identity
    route, the system trust store). The model endpoints are the operator's, so they are judged
    by the operator-endpoints rule, not the blocked address table: a model server on
    ``127.0.0.1`` is the common case. ``transport``: a test's response-level transport
    (:mod:`runvil._net.mock`) instead of the guarded one.
    """

    def __init__(
        self, network: Network | None = None, *, transport: Transport | None = None
    ) -> None:
        self._network = network
        self._transport = transport
        self._client: EgressClient | None = None

    @property
    def network(self) -> Network:
        if self._network is None:
            self._network = Network()  # the system trust store is loaded only when needed
        return self._network

    @property
    def client(self) -> EgressClient:
        """The run's egress client (its pool opens on the first request)."""
        if self._client is None:
            self._client = EgressClient(
                None if self._transport is not None else self.network,
                headers={
                    hdrs.ACCEPT: "*/*",  # what these requests always sent
                    hdrs.ACCEPT_ENCODING: ACCEPT_ENCODING,
                    hdrs.USER_AGENT: USER_AGENT,
                },
                retry_dropped=False,  # a POST is never resent behind the model's back
                transport=self._transport,
            )
        return self._client

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


class ChatClient:
    """Sends one conversation round to one endpoint and reads the answer."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        http: ModelTransport,
        *,
        role: str = "model",
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._http = http
        self._role = role
        self._settings = dict(settings or {})
        self._url = URL(endpoint.url)
        host, port = self._url.raw_host or "", self._url.port or 0
        self._host, self._port = host, port
        self._rule = operator_endpoints([(host, port)], logger=log)
        self._secrets = Secrets([endpoint.api_key])

    def _fail(self, problem: str) -> ModelFailure:
        # The whole text is redacted: the URL (an operator may have put a key in it) as well.
        return ModelFailure(f"model {self._role}: {self._secrets.redact(problem)}")

    async def complete(
        self,
        records: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        final: bool = False,
    ) -> Reply:
        """One round: the conversation so far and the tools on offer (``final``: the model may
        not call tools this round). Raises :class:`ModelFailure`."""
        ep = self.endpoint
        if ep.api == "openai":
            body, headers = _openai_request(ep, records, tools, final, self._settings)
        else:
            body, headers = _anthropic_request(ep, records, tools, final, self._settings)
        data = await self._post(body, headers)
        try:
            return _openai_reply(data) if ep.api == "openai" else _anthropic_reply(data)
        except (KeyError, IndexError, TypeError, ValueError) as err:
            raise self._fail(f"malformed response from {ep.url} ({err})") from None

    async def _post(self, body: dict[str, Any], headers: dict[str, str]) -> Any:
        ep = self.endpoint
        payload = json.dumps(body).encode("utf-8")
        try:
            async with asyncio.timeout(ep.timeout):
                status, raw = await self._exchange(payload, headers)
        except TimeoutError:
            raise self._fail(f"{ep.url} did not answer within {ep.timeout:g} seconds") from None
        except BodyTooLarge:
            raise self._fail(
                f"{ep.url} answered with more than {MAX_REPLY_BYTES} bytes"
            ) from None
        except NetworkError as err:
            raise self._fail(f"cannot reach {ep.url} ({err.cause})") from None
        except (DnsError, NoAllowedAddress, ProxyRefused, UnsupportedEncoding) as err:
            raise self._fail(f"cannot reach {ep.url} ({type(err).__name__})") from None
        text = raw.decode("utf-8", "replace")
        if not 200 <= status < 300:
            raise self._fail(f"{ep.url} answered HTTP {status}: {_quote(text, self._secrets)}")
        try:
            return json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's
            raise self._fail(f"{ep.url} answered with something that is not JSON") from None

    async def _exchange(self, payload: bytes, headers: Mapping[str, str]) -> tuple[int, bytes]:
        """POST ``payload`` to this client's endpoint over the run's egress client; the status
        and the body (a 2xx one whole up to :data:`MAX_REPLY_BYTES`, an error one cut)."""
        response = await self._http.client.request(
            self._rule,
            self._url,
            _reply_plan,
            method=hdrs.METH_POST,
            headers=headers,
            body=payload,
            host=self._host,
            port=self._port,
            secrets=self._secrets,
        )
        assert response.body is not None
        return response.status, response.body


def _reply_plan(head: Head) -> ReadPlan:
    """A 2xx reply whole, up to :data:`MAX_REPLY_BYTES`; an error answer's first 64 KiB."""
    if 200 <= head.status < 300:
        return ReadPlan(MAX_REPLY_BYTES)
    return ReadPlan(_ERROR_BODY_BYTES, keep_prefix=True)


def _quote(text: str, secrets: Secrets) -> str:
    """An error answer as quoted: the key redacted, then the first 300 characters, then a
    cut-off tail of the key redacted, then control characters escaped."""
    text = secrets.redact(text.strip())
    if not text:
        return "(empty body)"
    cut = secrets.redact_tail(text[:_BODY_QUOTE]) + ("..." if len(text) > _BODY_QUOTE else "")
    return "".join(c if c.isprintable() else f"\\u{{{ord(c):04x}}}" for c in cut)


# -- OpenAI chat completions ----------------------------------------------------------------------


def _openai_request(
    ep: ModelEndpoint,
    records: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    final: bool,
    settings: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, str]]:
    messages: list[dict[str, Any]] = []
    for record in records:
        role = record.get("role")
        content = str(record.get("content") or "")
        if role == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": content or None}
            calls = record.get("tool_calls") or []
            if calls:
                message["tool_calls"] = [
                    {
                        "id": str(call.get("id")),
                        "type": "function",
                        "function": {
                            "name": str(call.get("name")),
                            "arguments": str(call.get("arguments") or "{}"),
                        },
                    }
                    for call in calls
                ]
            messages.append(message)
        elif role == "tool":
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": str(record.get("tool_call_id")),
                    "content": content,
                }
            )
        elif role in ("system", "user"):
            messages.append({"role": role, "content": content})
    body: dict[str, Any] = {"model": ep.model, "messages": messages}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": spec["name"],
                    "description": spec["description"],
                    "parameters": spec["parameters"],
                },
            }
            for spec in tools
        ]
        if final:
            body["tool_choice"] = "none"
    if "max_tokens" in settings:
        body["max_tokens"] = settings["max_tokens"]
    if "temperature" in settings:
        body["temperature"] = settings["temperature"]
    headers = {"Content-Type": "application/json"}
    if ep.api_key:
        headers["Authorization"] = f"Bearer {ep.api_key}"
    return body, headers


def _openai_reply(data: Any) -> Reply:
    message = data["choices"][0]["message"]
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise ValueError("message content is not text")
    calls = []
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        # some compatible servers leave the id out; the conversation still needs one per call
        call_id = str(call.get("id") or f"call_{index}")
        calls.append(ToolCall(id=call_id, name=str(function["name"]), arguments=arguments))
    return Reply(content=content, tool_calls=tuple(calls))


# -- Anthropic Messages -------------------------------------------------------------------------


def _arguments_object(text: Any) -> Any:
    try:
        value = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _anthropic_request(
    ep: ModelEndpoint,
    records: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    final: bool,
    settings: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, str]]:
    system: list[str] = []
    messages: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for record in records:
        role = record.get("role")
        content = str(record.get("content") or "")
        if role == "system":
            system.append(content)
        elif role == "user":
            add("user", [{"type": "text", "text": content}] if content else [])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
            for call in record.get("tool_calls") or []:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": str(call.get("id")),
                        "name": str(call.get("name")),
                        "input": _arguments_object(call.get("arguments")),
                    }
                )
            add("assistant", blocks)
        elif role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(record.get("tool_call_id")),
                "content": content,
            }
            if record.get("is_error"):
                result["is_error"] = True
            add("user", [result])
    body: dict[str, Any] = {
        "model": ep.model,
        "max_tokens": settings.get("max_tokens", DEFAULT_MAX_TOKENS),
        "messages": messages,
    }
    if system:
        body["system"] = "\n\n".join(system)
    if tools:
        body["tools"] = [
            {
                "name": spec["name"],
                "description": spec["description"],
                "input_schema": spec["parameters"],
            }
            for spec in tools
        ]
        if final:
            body["tool_choice"] = {"type": "none"}
    if "temperature" in settings:
        body["temperature"] = settings["temperature"]
    headers = {"Content-Type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
    if ep.api_key:
        headers["x-api-key"] = ep.api_key
    return body, headers


def _anthropic_reply(data: Any) -> Reply:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in data["content"]:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                ToolCall(
                    id=str(block["id"]),
                    name=str(block["name"]),
                    arguments=json.dumps(block.get("input") or {}, ensure_ascii=False),
                )
            )
    return Reply(content="".join(texts), tool_calls=tuple(calls))
