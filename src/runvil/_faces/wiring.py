"""The one path from configuration to what a face runs with.

``runvil fetch``, ``runvil search``, ``runvil run`` and ``runvil mcp`` must build the same search
provider, network, policy, approver and Host from the same configuration, or one face would
quietly behave differently from another. :func:`wire` is that path, and the only one: a face
reads its :class:`~runvil._faces.config.Config`, calls ``wire`` once, and asks the result for a
Host, whose runs call the tools. Nothing here decides a setting (:mod:`runvil._faces.config`
does that), and nothing here reads the environment or a file: the network and the policy are
what the caller passes (the console script passes neither, so the real network and
``FetchPolicy()`` apply, changed only by the policy fields settings set).

Two policies come out of one configuration. Prompt files (``runvil run``) get
:attr:`Wiring.policy`: the seeds' policy with the settings given, because a prompt is written
against the seeds' Pack (its Lua may match the three-line header). The model-facing faces
(``runvil fetch``, ``runvil mcp``) get :attr:`Wiring.face_policy`: the same, plus the defaults
the settings table gives the reading extensions (continuation and PDFs on) where nothing set
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from runvil._faces.config import Config, ConfigError

if TYPE_CHECKING:
    from runvil._host import Approval, ApprovalRequest, Approver, Host
    from runvil.prompts import ModelEndpoint
    from runvil.web import FetchPolicy, Network, SearchProvider
    from runvil.web._pack import WebPack

__all__ = ["Wiring", "approver_for", "wire"]

#: The forms of the web Pack each face serves.
ALL_FORMS: tuple[str, ...] = ("runvil/web", "promptforge/web")
MCP_FORMS: tuple[str, ...] = ("runvil/web",)
#: The web Pack's tools, by tool name.
WEB_TOOLS: tuple[str, ...] = ("fetch", "search")

_FROM_CONFIG: Any = object()


def refuse_every_call(request: ApprovalRequest) -> Approval:
    """Approval mode ``deny``: every call is refused (the model reads why)."""
    from runvil._host import Approval

    return Approval.REFUSE


def approver_for(mode: str, ask: Approver | None) -> Approver | None:
    """The approver an approval mode stands for: ``auto`` none (every call goes ahead), ``deny``
    :func:`refuse_every_call`, ``ask`` the face's own way of asking a person (``None`` when the
    face has none, as MCP, whose client asks its user)."""
    if mode == "deny":
        return refuse_every_call
    if mode == "ask":
        return ask
    return None


class Wiring:
    """Everything a face runs with, built from one :class:`Config` in one place.

    The search provider is built on first use, so a command that never searches (``runvil
    fetch``, ``runvil run --no-web``) never fails over a search setting it does not use.
    """

    def __init__(
        self,
        config: Config,
        *,
        network: Network | None,
        policy: FetchPolicy,
        provider: Any,
        approve: Approver | None,
        face_policy: FetchPolicy | None = None,
    ) -> None:
        self.config = config
        self.network = network
        self.policy = policy
        """The fetch policy of prompt files: the given policy with the settings set."""
        self.face_policy = face_policy if face_policy is not None else policy
        """The fetch policy of ``runvil fetch`` and ``runvil mcp`` (see the module docstring)."""
        self.approve = approve
        self._provider = provider
        self.shared_state: Any = None
        """A fleet's shared state (``runvil mcp --http --state``), set before the Host is built:
        the search rate and memo are then the fleet's (:mod:`runvil._faces.search_pace`)."""

    def search_provider(self) -> SearchProvider | None:
        """The configured search provider (``None`` for ``search.provider = "none"``). A provider
        that refuses its settings (a bad URL) is a :class:`ConfigError`."""
        if self._provider is _FROM_CONFIG:
            from runvil.web._search.config import provider_from_settings

            settings = self.config.search
            if self.policy.private_hosts:
                # One list for every egress: a search endpoint it names may be private too.
                settings = dataclasses.replace(
                    settings, private_hosts=tuple(self.policy.private_hosts)
                )
            # Search takes [search] proxy when it is set (to "none" too), else the fetch's.
            if self.config.sources.get("search.proxy", "default") != "default":
                proxy = self.config.search_proxy
            else:
                proxy = self.policy.proxy
            if proxy is not None:
                settings = dataclasses.replace(settings, proxy=proxy)
            try:
                self._provider = provider_from_settings(settings, network=self.network)
            except ValueError as err:
                raise ConfigError(f"search provider {settings.provider}: {err}") from None
            rate = self.config.search_rate
            if self._provider is not None and (rate is not None or self.shared_state is not None):
                from runvil._faces.search_pace import PacedSearch

                self._provider = PacedSearch(self._provider, rate=rate, state=self.shared_state)
        provider: SearchProvider | None = self._provider
        return provider

    def web_pack(self, tools: Sequence[str] = WEB_TOOLS, *, prompts: bool = False) -> WebPack:
        """The web Pack over this configuration's provider, network and policy (the prompt
        files' policy with ``prompts``, else the faces'); ``tools`` narrows it (``("fetch",)``
        builds no search provider at all)."""
        from runvil.web._pack import web_pack

        policy = self.policy if prompts else self.face_policy
        provider = self.search_provider() if "search" in tools else None
        return web_pack(provider=provider, network=self.network, policy=policy, tools=tools)

    def host(
        self,
        forms: Sequence[str] = ALL_FORMS,
        *,
        installed: bool = False,
        tools: Sequence[str] = WEB_TOOLS,
        prompts: bool = False,
        plugins: Sequence[str] = (),
    ) -> Host:
        """The Host a face serves: the web Pack in ``forms`` (none when ``web`` is off, or
        ``tools`` is empty) with ``tools`` and, with ``installed``, every Pack installed
        through the ``runvil.packs`` entry points (``plugins``: those named), each given its
        ``[packs.KEY]`` configuration and the settings it declares that were set. ``prompts``:
        the Host runs prompt files, so its fetch policy is :attr:`policy`, not
        :attr:`face_policy`."""
        from runvil._host import Host
        from runvil._host.plugins import installed_plugins

        policy = self.policy if prompts else self.face_policy
        with_web = self.config.web and bool(tools)
        packs = [self.web_pack(tools, prompts=prompts)] if with_web else []
        names: list[str] = list(forms) if with_web else []
        if installed:
            names += [name for name in installed_plugins() if name not in ALL_FORMS]
        names += [name for name in plugins if name not in names]
        with_search = with_web and "search" in tools
        return Host(
            plugins=names,
            config=self.config.packs,
            search_provider=self.search_provider() if with_search else None,
            network=self.network,
            approve=self.approve,
            fetch_policy=policy,
            packs=packs,
            settings=self.config.pack_settings,
        )

    def command_host(self, tool: str) -> Host:
        """The Host of ``runvil fetch`` / ``runvil search``: the web Pack narrowed to ``tool``
        (``fetch`` builds no search provider), under the faces' policy, whose one call a person
        made themselves (no approval is asked). A :class:`ConfigError` for ``search`` without a
        provider."""
        from runvil._host import Host

        if tool == "search" and self.search_provider() is None:
            raise ConfigError("no search provider is configured (search.provider is none)")
        return Host(packs=[self.web_pack((tool,))], plugins=MCP_FORMS)

    def model_endpoints(self, roles: Iterable[str]) -> dict[str, ModelEndpoint]:
        """The endpoints of the configured roles among ``roles`` (the ones a prompt names).

        Roles the prompt does not name are not resolved, so a stale ``RUNVIL_MODEL_*`` variable
        or a role for another prompt whose key is unset never stops this run.
        """
        from runvil.prompts import endpoints_from_config

        try:
            return endpoints_from_config(self.config, roles=roles)
        except ValueError as err:
            raise ConfigError(str(err)) from None


def wire(
    config: Config,
    *,
    network: Network | None = None,
    policy: FetchPolicy | None = None,
    provider: Any = _FROM_CONFIG,
    ask: Approver | None = None,
) -> Wiring:
    """Turn ``config`` into what a face runs with.

    ``network`` and ``policy`` are for an embedding application (and the test suite's
    launcher): ``None`` means the real network and ``FetchPolicy()``, with the policy fields the
    configuration sets applied on top; the faces' policy then takes the table's defaults for the
    fields that neither the configuration nor ``policy`` changed. ``provider`` replaces the
    configured search provider. ``ask`` is how this face asks a person before a call (approval
    mode ``ask``).
    """
    from runvil.web import FetchPolicy

    seeds = FetchPolicy()
    given = policy if policy is not None else seeds
    base = dataclasses.replace(given, **dict(config.fetch)) if config.fetch else given
    # The faces' defaults fill only what neither a setting nor the caller's policy chose.
    defaults = {
        name: value
        for name, value in config.fetch_defaults.items()
        if name not in config.fetch and getattr(given, name) == getattr(seeds, name)
    }
    ca_bundle = config.fetch.get("ca_bundle")
    if ca_bundle is not None:
        # The company CA is trusted by every request of this configuration (fetches, robots.txt,
        # search providers, model endpoints), not only by the fetch policy's own.
        from runvil.web import Network

        trusting = network if network is not None else Network()
        if trusting.ca_bundle != ca_bundle:
            trusting = dataclasses.replace(trusting, ca_bundle=ca_bundle)
        network = trusting
    _check_browser(base)
    defaults.update(_browser_default(config, given, seeds))
    return Wiring(
        config,
        network=network,
        policy=base,
        provider=provider,
        approve=approver_for(config.approval, ask),
        face_policy=dataclasses.replace(base, **defaults) if defaults else base,
    )


def _browser_default(config: Config, given: FetchPolicy, seeds: FetchPolicy) -> dict[str, str]:
    """The faces' ``browser`` when nothing chose one: ``auto`` when a browser that can render
    with its sandbox on is found (docs/fetch.md), else the seeds' ``never``."""
    if "browser" in config.fetch or given.browser != seeds.browser:
        return {}
    from runvil.web._fetch.browser.discovery import find_browser

    path = config.fetch.get("browser_path", given.browser_path)
    return {"browser": "auto"} if find_browser(path).usable else {}


def _check_browser(policy: FetchPolicy) -> None:
    """A browser the operator asked for must be able to run: refuse to start without one,
    naming what is missing (never a silent fallback, never a sandbox switched off)."""
    if policy.browser == "never":
        return
    from runvil.web._fetch.browser.discovery import find_browser

    status = find_browser(policy.browser_path)
    if not status.usable:
        raise ConfigError(f"fetch.browser is {policy.browser}, but {status.reason}")
