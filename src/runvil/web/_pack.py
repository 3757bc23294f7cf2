"""The web Pack (``runvil/web``) and its PromptForge form (the ``promptforge/web`` Plugin).

The Pack is a thin, fixed shell around two tool instances: one ``WebFetch`` built once per Host
with the default fetch policy, and one ``WebSearch`` over the Host's search provider. It adds no
wrapping of its own: a call reaches the tool named by the last segment of its id or path, with
the call's arguments passed through, and the tool's text and errors come back unchanged.

What lives here is what the seeds say about the Pack itself: its names, that it takes no
configuration and needs the ``search-provider`` service (so which setup problems make it
unavailable, in the seeds' order), and which argument of each tool is the "detail" an approval
prompt shows (the URL, the query). The Host words the reasons and notices from these facts.

Its settings (the ``[fetch]`` keys and the ``[search]`` proxy and rate) are declared in
:mod:`runvil.web._settings`, which the faces read without loading this module; the Plugin makes
its fetch policy from the values the Host hands it (:func:`policy_from_settings`).

``web_pack(provider=..., network=..., policy=...)`` builds the Pack for ``Host(packs=[...])``;
:func:`plugin` is the same Pack as the ``runvil.packs`` entry points ``runvil/web`` and
``promptforge/web`` build it for ``Host()`` (the provider from the environment when the Host was
given none). This module imports neither tool until the Pack is built, so ``import runvil``
stays light.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from runvil._pack import PackContext, Requirement
from runvil._tools import ToolImplementation
from runvil.web._fetch.arguments import MAX_URL_CHARS
from runvil.web._search.arguments import MAX_QUERY_CHARS
from runvil.web._settings import SEARCH_SETTINGS, SETTINGS, policy_fields

if TYPE_CHECKING:
    from runvil._net import Network
    from runvil.web._fetch.policy import FetchPolicy
    from runvil.web._search.provider import SearchProvider

__all__ = ["PACK_ID", "PACK_NAME", "PLUGIN_ID", "WebPack", "WebTools", "plugin", "web_pack"]

#: The Pack id, fixed by the seeds: no Host can give the web Pack another.
PACK_ID = "web"
#: The Pack's fully qualified name.
PACK_NAME = "runvil/web"
#: The PromptForge Plugin id; its tool paths are ``promptforge/web/{tool name}``.
PLUGIN_ID = "promptforge/web"
#: The key under which a Host's configuration would hold the Pack's (empty) configuration.
CONFIG_KEY = "web"
#: The Host-wide service every web search runs through.
SEARCH_SERVICE = "search-provider"

#: The Pack's tool names, in tool id order.
TOOL_NAMES: tuple[str, ...] = ("fetch", "search")

#: The argument each network tool's approval prompt shows, and the length past which the tool
#: refuses it (``web_fetch: url is longer than 8192 characters``, ``web_search: query exceeds
#: 400 characters``): such a call cannot go out, so nobody is asked about it.
_APPROVAL_ARGUMENT = {"fetch": ("url", MAX_URL_CHARS), "search": ("query", MAX_QUERY_CHARS)}


class WebTools:
    """The tool instances behind both forms of the Pack, built once per Host (``search`` is
    ``None`` for a Pack narrowed to the fetch, ``fetch`` for one narrowed to the search)."""

    def __init__(
        self, fetch: ToolImplementation | None, search: ToolImplementation | None
    ) -> None:
        self.fetch = fetch
        self.search = search

    async def aclose(self) -> None:
        """Close whatever the tools hold open (the fetch client's connection pool)."""
        for impl in (self.fetch, self.search):
            close = getattr(impl, "aclose", None)
            if close is not None:
                await close()


def build_web_tools(provider: Any, network: Any, policy: Any) -> WebTools:
    """Build the fetch client (once, with ``policy``, the default one unless an embedding
    application or the operator chose another) and the search tool over ``provider``."""
    from runvil.web._search.tool import WebSearch

    return WebTools(_fetch_tool(network, policy), WebSearch(provider, **_domain_lists(policy)))


def _domain_lists(policy: Any) -> dict[str, Any]:
    """The operator's domain lists, which hold for search results too: a model is not pointed
    at a site it may not fetch (docs/search.md, "Rows a model is shown")."""
    if policy is None:
        return {}
    return {"allowed_domains": policy.allowed_domains, "blocked_domains": policy.blocked_domains}


def build_fetch_tool(network: Any, policy: Any) -> WebTools:
    """The Pack narrowed to its fetch tool: no search tool, no provider."""
    return WebTools(_fetch_tool(network, policy), None)


def build_search_tool(provider: Any, policy: Any) -> WebTools:
    """The Pack narrowed to its search tool (``runvil search``): no fetch client, whose trust
    store alone takes a noticeable part of a command's start."""
    from runvil.web._search.tool import WebSearch

    return WebTools(None, WebSearch(provider, **_domain_lists(policy)))


def _fetch_tool(network: Any, policy: Any) -> ToolImplementation:
    from runvil.web._fetch.policy import FetchPolicy
    from runvil.web._fetch.tool import WebFetch

    return WebFetch(policy=policy if policy is not None else FetchPolicy(), network=network)


class WebPack:
    """The web Pack: ``web/fetch`` and ``web/search`` over one provider, network and policy.

    It takes no configuration (only ``None`` and ``{}`` are accepted under its key ``web``) and
    requires the ``search-provider`` service: without a provider it is unavailable, in both forms,
    and builds nothing.

    ``tools`` narrows the Pack to some of its tools, for a face the operator told to serve only
    those (``runvil mcp --tools web_fetch``): a Pack of ``("fetch",)`` builds the fetch tool
    alone and so needs no search provider; one of ``("search",)`` builds no fetch client. Every
    Host, prompt and adapter gets the whole Pack unless an operator asked otherwise.
    """

    name = PACK_NAME
    plugin_id: str | None = PLUGIN_ID
    config_key = CONFIG_KEY
    settings = (*SEARCH_SETTINGS, *SETTINGS)

    def __init__(
        self,
        provider: SearchProvider | None,
        network: Network | None = None,
        policy: FetchPolicy | None = None,
        tools: Sequence[str] = TOOL_NAMES,
    ) -> None:
        unknown = [name for name in tools if name not in TOOL_NAMES]
        if unknown or not tools:
            raise ValueError(
                f"the web Pack's tools are {', '.join(TOOL_NAMES)}; "
                f"tools={tuple(tools)!r} names {'none of them' if not tools else unknown}"
            )
        self.provider = provider
        self.network = network
        self.policy = policy
        self.tool_names = tuple(name for name in TOOL_NAMES if name in tools)
        self._tools: WebTools | None = None

    @property
    def requirements(self) -> Sequence[Requirement]:
        if "search" not in self.tool_names:
            return ()
        return (Requirement(SEARCH_SERVICE, self.provider is not None),)

    def configure(self, value: Any) -> str | None:
        """Only null (``None``) and ``{}`` (an empty mapping) count as no configuration."""
        if value is None or (isinstance(value, Mapping) and len(value) == 0):
            return None
        return "takes no configuration"

    def build(self) -> Sequence[ToolImplementation]:
        """The fetch tool and the search tool, built on the first call only."""
        if self._tools is None:
            if "fetch" not in self.tool_names:
                self._tools = build_search_tool(self.provider, self.policy)
            elif "search" in self.tool_names:
                self._tools = build_web_tools(self.provider, self.network, self.policy)
            else:
                self._tools = build_fetch_tool(self.network, self.policy)
        built = {"fetch": self._tools.fetch, "search": self._tools.search}
        return tuple(impl for name in self.tool_names if (impl := built[name]) is not None)

    def approval_detail(self, tool_name: str, args: Mapping[str, Any]) -> str | None:
        """The URL or query an approval prompt shows, or ``None`` when the call carries none.

        A call without a string ``url`` / ``query``, or with one longer than the tool accepts,
        is refused by the tool itself before any network access, so it needs no approval: the
        user is never asked about a call that cannot go out (nor shown a megabyte of it).
        """
        shown = _APPROVAL_ARGUMENT.get(tool_name)
        if shown is None:
            return None
        key, longest = shown
        value = args.get(key)
        return value if isinstance(value, str) and len(value) <= longest else None

    async def aclose(self) -> None:
        """Close the tools' connections, if they were built."""
        if self._tools is not None:
            await self._tools.aclose()

    def __repr__(self) -> str:
        return f"<WebPack provider={getattr(self.provider, 'name', self.provider)!r}>"


def web_pack(
    *,
    provider: SearchProvider | None,
    network: Network | None = None,
    policy: FetchPolicy | None = None,
    tools: Sequence[str] = ("fetch", "search"),
) -> WebPack:
    """The web Pack for ``Host(packs=[...])``: ``provider`` is the search service (``None``: the
    Host provides none, and the Pack is unavailable), ``network`` the network seam (``None``: the
    real network), ``policy`` a stricter fetch policy for an embedding application (``None``:
    ``FetchPolicy()``), ``tools`` the Pack's tools to build (``("fetch",)`` needs no
    provider)."""
    return WebPack(provider, network, policy, tools)


def plugin(context: PackContext) -> WebPack:
    """The ``runvil/web`` / ``promptforge/web`` Plugin: the web Pack over the Host's
    ``search-provider`` service, or the one the environment configures when the Host was given
    none (a misconfigured environment raises ``ValueError`` naming the variable)."""
    services = context.services
    if SEARCH_SERVICE in services:
        provider = services[SEARCH_SERVICE]
    else:
        provider = _provider_from_env(context.network)
    return WebPack(provider, context.network, policy_from_settings(context.settings))


def policy_from_settings(settings: Mapping[str, Any]) -> FetchPolicy | None:
    """The fetch policy the web Pack's settings make: the ``fetch_policy`` setting
    (``Host(fetch_policy=...)``; ``None``: ``FetchPolicy()``) with each ``fetch.NAME`` setting
    given applied to its field ``NAME``. ``None`` when neither is given."""
    base = settings.get("fetch_policy")
    fields = policy_fields(settings)
    if not fields:
        policy: FetchPolicy | None = base
        return policy
    import dataclasses

    from runvil.web._fetch.policy import FetchPolicy

    return dataclasses.replace(base if base is not None else FetchPolicy(), **fields)


#: The settings the web Pack declares (``[fetch]``, ``[search]``); the faces read them from
#: :mod:`runvil.web._settings` without loading this module.
plugin.settings = WebPack.settings  # type: ignore[attr-defined]


def _provider_from_env(network: Any) -> Any:
    """The provider the environment configures, speaking through the Host's network seam."""
    from runvil.web._search.config import provider_from_env

    return provider_from_env(network=network)
