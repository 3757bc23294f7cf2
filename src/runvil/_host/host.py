"""The Host: where Packs are set up, declared, offered, approved, called and enveloped.

Everything above the Host (the prompt runtime, the model loop, the MCP server, the CLI, the
adapters) reaches tools through a :class:`Host` and the :class:`~runvil.Run` it starts; nothing
below it (the tools themselves) knows about Lua, models, MCP or envelopes. The Host owns the rules
that are the same for every face and every Pack:

* which Packs / Plugins exist and whether each one built (and if not, the exact reason);
* the requirements notice a prompt gets when the Host cannot satisfy its declarations;
* the read-only Tool and Pack objects, wire names and the schema a model is shown;
* the approval hook asked before a call its Pack says reaches out;
* the untrusted envelope, with one nonce per run, added where a result leaves the host;
* cancelling calls still in flight when a run ends.

What a Pack is called, which tools it has, what it needs and what an approval question shows
are the Pack's own facts (:class:`~runvil.Pack`); the Host imports no Pack. A Host is cheap to
build and is meant to live as long as the application (one CLI invocation, one MCP server
process). A :class:`~runvil.Run` is one prompt run or one MCP session.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from runvil._closing import AsyncClosing
from runvil._errors import RunError, RunErrorKind, ToolError
from runvil._host.approval import ApprovalGate, Approver
from runvil._host.invoker import Invoker
from runvil._host.objects import Dialect, PackObject, ToolObject, tool_object
from runvil._host.plugins import (
    installed_plugins,
    load_plugin,
    ordered_names,
    pack_id,
    setup_reason,
)
from runvil._host.run import Run
from runvil._pack import Pack, PackContext
from runvil._tools import ToolImplementation

__all__ = [
    "DEFAULT_PLUGINS",
    "Host",
    "OfferError",
    "requirements_notice",
    "tool_call_failure",
]

#: The Plugins a default ``Host()`` calls: the web Plugin in both forms, backed by the same tools.
DEFAULT_PLUGINS: tuple[str, ...] = ("runvil/web", "promptforge/web")

NOTICE_HEADING: Final = "the environment cannot satisfy this prompt:"


class _Unset:
    """Sentinel for a keyword the caller did not give."""

    def __init__(self, what: str) -> None:
        self._what = what

    def __repr__(self) -> str:
        return self._what


_DEFAULT_PLUGINS: Final = _Unset("<DEFAULT_PLUGINS, or every form of the given packs>")
_NOT_GIVEN: Final = _Unset("<not given: the Plugin decides (the web Plugin reads the env)>")


class OfferError(Exception):
    """``packs.offer`` could not offer a Pack; ``str(err)`` is the exact message, e.g.
    ``packs.offer: the web Pack is unavailable in this run: {reason}``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def tool_call_failure(err: ToolError) -> RunError:
    """The run error an uncaught hard tool failure ends a run with: kind Tool, text
    ``tool call failure: {message}``, the tool's message unchanged."""
    return RunError(RunErrorKind.Tool, f"tool call failure: {err.message}")


def requirements_notice(lines: Iterable[str]) -> str:
    """The requirements notice: the heading, then one ``- {line}`` per unmet requirement."""
    return "\n".join([NOTICE_HEADING, *(f"- {line}" for line in lines)])


class Host(AsyncClosing):
    """Sets up Packs once and hands out Tool objects, requirements checks and runs.

    ``Host(plugins=DEFAULT_PLUGINS, config=None, search_provider=<the Plugin's default>,
    network=None, approve=None, *, fetch_policy=None, packs=None, settings=None)``:

    * ``packs``: built Pack objects to serve (``[web_pack(provider=..., network=...)]``).
    * ``plugins``: the Plugin names the Host calls, each serving one form of one Pack:
      ``runvil/web`` the web Pack (tool ids ``web/fetch``, ``web/search``), ``promptforge/web``
      the same tools in the promptforge form (paths ``promptforge/web/fetch``, ...). A name is
      looked up among ``packs`` first (their ``name`` and ``plugin_id``), then in the
      ``runvil.packs`` entry-point group. Default: ``DEFAULT_PLUGINS`` without ``packs``, every
      form of the given Packs with them. ``()`` is a Host without Packs.
    * ``config``: maps a Pack's configuration key (``web``) to its configuration; the web Pack
      takes none, so only ``None`` or ``{}`` is accepted there (anything else leaves it
      unavailable).
    * ``search_provider``: the Host-wide service ``search-provider`` handed to Plugins. Leave it
      out and the web Plugin reads one from the environment (a misconfigured environment raises
      ``ValueError``); ``None`` means the Host provides none (the web Pack is then unavailable).
    * ``network``: the network seam handed to Plugins (``None``: the real network).
    * ``approve``: asked before a call its Pack says reaches out; default: every call goes ahead.
    * ``settings``: each Pack's settings by its Plugin name (``{"acme/notes": {"notes.suffix":
      "!"}}``), handed to that Plugin as :attr:`PackContext.settings`; the faces fill it from
      ``runvil.toml``, the environment and flags (the settings each Pack declares).
    * ``fetch_policy``: for embedding applications and tests only (a stricter policy); a Pack or
      prompt can never change it. Default: ``FetchPolicy()``. ``search_provider``,
      ``network`` and ``fetch_policy`` are a convenience for the web Pack: the first two are
      handed to every Plugin, ``fetch_policy`` becomes the web Plugins' ``fetch_policy``
      setting.
    """

    def __init__(
        self,
        plugins: Iterable[str] | _Unset = _DEFAULT_PLUGINS,
        config: Mapping[str, Any] | None = None,
        search_provider: Any = _NOT_GIVEN,
        network: Any = None,
        approve: Approver | None = None,
        *,
        fetch_policy: Any = None,
        packs: Iterable[Pack] | None = None,
        settings: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(
                f"config maps a Plugin's key to its configuration, not {type(config).__name__}"
            )
        given = _given_packs(packs)
        names = _plugin_names(plugins, given, packs is not None)
        services = {} if search_provider is _NOT_GIVEN else {"search-provider": search_provider}
        by_plugin = _pack_settings(settings, fetch_policy)

        def context(name: str) -> PackContext:
            return PackContext(
                services=services, network=network,
                settings=MappingProxyType(dict(by_plugin.get(name, {}))),
            )

        forms = _resolve_forms(names, given, context)

        self._gate = ApprovalGate(approve)
        self._default_run: Run | None = None
        self._closed = False
        self._built: list[Pack] = []
        self._impls: dict[str, tuple[Pack, ToolImplementation]] = {}
        self._invoker = Invoker(self.resolve, self._impls, self._gate)
        self._packs: dict[str, PackObject] = {}
        self._plugins: dict[str, PackObject] = {}
        self._by_name: dict[str, PackObject] = {}
        tools: dict[str, ToolObject] = {}
        paths: dict[str, ToolObject] = {}
        settings = dict(config or {})
        for pack, dialects in forms:
            reasons = {
                dialect: setup_reason(pack, _label(pack, dialect), dialect, settings)
                for dialect in dialects
            }
            impls: Sequence[ToolImplementation] = ()
            if any(reason is None for reason in reasons.values()):
                impls = self._build(pack)
            for dialect, reason in reasons.items():
                obj = _pack_object(pack, dialect, reason, impls)
                if dialect == "runvil":
                    self._packs[obj.id] = obj
                    self._by_name[obj.name] = obj
                    tools.update((tool.id, tool) for tool in obj.tools)
                else:
                    self._plugins[obj.id] = obj
                    paths.update((tool.id, tool) for tool in obj.tools)
        self._tools = dict(sorted(tools.items()))
        self._paths = dict(sorted(paths.items()))

    # -- building ------------------------------------------------------------------------------

    def _build(self, pack: Pack) -> Sequence[ToolImplementation]:
        """Build ``pack``'s tools (once) and index them by tool id, in tool id order."""
        ident = pack_id(pack)
        impls = sorted(pack.build(), key=lambda impl: impl.tool.id)
        self._built.append(pack)
        for impl in impls:
            catalog = impl.tool
            if catalog.id != f"{ident}/{catalog.name}" or catalog.id in self._impls:
                raise ValueError(
                    f"Pack {pack.name} built tool {catalog.id!r}; its tool ids are "
                    f"{ident}/NAME, each once"
                )
            self._impls[catalog.id] = (pack, impl)
        return impls

    # -- what the Host offers ------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, ToolObject]:
        """Runvil-form Tool objects of every usable Pack by tool id, in tool id order
        (``host.tools.get("web/fetch")``). Tools of an unavailable Pack are not here."""
        return MappingProxyType(self._tools)

    @property
    def plugin_tools(self) -> Mapping[str, ToolObject]:
        """PromptForge-form Tool objects of every usable Plugin by tool path (unbound: their
        ``name`` is the tool name; use :meth:`bind` for an alias)."""
        return MappingProxyType(self._paths)

    @property
    def packs(self) -> Mapping[str, PackObject]:
        """The Host's runvil Packs by Pack id, usable or not (see ``PackObject.reason``)."""
        return MappingProxyType(self._packs)

    @property
    def plugins(self) -> Mapping[str, PackObject]:
        """The Host's PromptForge Plugins by Plugin id, usable or not."""
        return MappingProxyType(self._plugins)

    def pack(self, ref: str) -> PackObject | None:
        """The runvil Pack a ``uses:`` entry names. A bare entry means the runvil Pack of that
        id, so ``web`` and ``runvil/web`` are the same Pack; another vendor's Pack is named in
        full (``acme/notes``)."""
        if "/" in ref:
            return self._by_name.get(ref)
        found = self._packs.get(ref)
        return found if found is not None and found.name == f"runvil/{ref}" else None

    def resolve(self, tool: ToolObject | str) -> ToolObject:
        """The Tool object for a Tool object, a tool id or a tool path. Raises ``LookupError``
        when the Host has no usable tool by that name."""
        if isinstance(tool, ToolObject):
            return tool
        found = self._tools.get(tool) or self._paths.get(tool)
        if found is None:
            raise LookupError(self._unknown_tool_message(tool))
        return found

    def bind(self, alias: str, path: str) -> ToolObject:
        """The PromptForge Tool object for ``alias`` bound to ``path`` under ``tools:``: its
        ``name`` is the alias, everything else the path's tool. Raises ``LookupError``."""
        found = self._paths.get(path)
        if found is None:
            raise LookupError(self._unknown_tool_message(path))
        return dataclasses.replace(found, name=alias)

    def _unknown_tool_message(self, ref: str) -> str:
        for owner in (*self._packs.values(), *self._plugins.values()):
            if owner.reason is not None and ref.startswith(f"{owner.id}/"):
                return f"tool {ref} is unavailable: {owner.reason}"
        return f"unknown tool {ref}"

    # -- requirements --------------------------------------------------------------------------

    def prepare(
        self, uses: Iterable[str] = (), plugins: Iterable[str] = ()
    ) -> tuple[PackObject, ...]:
        """Check a prompt's declarations before anything runs.

        ``uses`` holds runvil-dialect Pack entries (``web`` or ``runvil/web``), ``plugins``
        promptforge-dialect Plugin ids (``promptforge/web``). Returns the declared Pack / Plugin
        objects in declaration order; raises ``RunError(RequirementsUnmet, notice)`` naming every
        unmet declaration, one line each, e.g.::

            the environment cannot satisfy this prompt:
            - web is unavailable: web needs runvil/search-provider, and this host provides none
        """
        lines: list[str] = []
        declared: list[PackObject] = []
        for entry in dict.fromkeys(_entries(uses, "uses")):
            pack = self.pack(entry)
            if pack is None:
                lines.append(f"missing required Pack: {entry}")
            elif pack.reason is not None:
                lines.append(f"{pack.id} is unavailable: {pack.reason}")
            elif pack not in declared:
                declared.append(pack)
        for entry in dict.fromkeys(_entries(plugins, "plugins")):
            plugin = self._plugins.get(entry)
            if plugin is None:
                lines.append(f"missing required Plugin: {entry}")
            elif plugin.reason is not None:
                lines.append(plugin.reason)
            else:
                declared.append(plugin)
        if lines:
            raise RunError(RunErrorKind.RequirementsUnmet, requirements_notice(lines))
        return tuple(declared)

    def offer_pack(self, pack_id: str) -> tuple[ToolObject, ...]:
        """The tools ``packs.offer(pack_id)`` offers, in tool id order. Raises
        :class:`OfferError` with ``packs.offer: the web Pack is unavailable in this run:
        {reason}`` for an unavailable Pack and ``packs.offer: unknown Pack {id}`` for one the Host
        does not have."""
        pack = self.pack(pack_id)
        if pack is None:
            raise OfferError(f"packs.offer: unknown Pack {pack_id}")
        if pack.reason is not None:
            raise OfferError(
                f"packs.offer: the {pack.id} Pack is unavailable in this run: {pack.reason}"
            )
        return pack.tools

    # -- runs and calls ------------------------------------------------------------------------

    def run(self, *, nonce: str | None = None) -> Run:
        """Start a run (one prompt run, one MCP session) with a fresh nonce.
        Use it as ``async with host.run() as run:`` or close it with ``await run.aclose()``."""
        if self._closed:
            raise RuntimeError("this host is closed")
        return Run(self._invoker, nonce)

    start_run = run

    async def call(self, tool: ToolObject | str, args: Any, *, envelope: bool = True) -> str:
        """Call a tool in the Host's implicit run (created on first use, ended by
        :meth:`aclose`): see :meth:`Run.call`."""
        if self._default_run is None:
            self._default_run = self.run()
        return await self._default_run.call(tool, args, envelope=envelope)

    async def aclose(self) -> None:
        """End the implicit run and close the Packs' connections. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._default_run is not None:
            await self._default_run.aclose()
        for pack in self._built:
            await pack.aclose()


def _given_packs(packs: Iterable[Pack] | None) -> list[Pack]:
    if packs is None:
        return []
    given = list(packs)
    for pack in given:
        if not isinstance(pack, Pack):
            raise TypeError(f"packs holds built Pack objects, not {type(pack).__name__}")
    _check_ids(given)
    return given


def _check_ids(packs: Iterable[Pack]) -> None:
    """Refuse two Packs with one Pack id: their tool ids would be one and the same."""
    ids: dict[str, str] = {}
    for pack in packs:
        ident = pack_id(pack)
        if ident in ids:
            raise ValueError(f"two Packs with the Pack id {ident}: {ids[ident]}, {pack.name}")
        ids[ident] = pack.name


def _plugin_names(plugins: Iterable[str] | _Unset, given: list[Pack], explicit: bool) -> list[str]:
    if isinstance(plugins, _Unset):
        if not explicit:
            return list(DEFAULT_PLUGINS)
        return [name for pack in given for name in _form_names(pack)]
    if isinstance(plugins, str):
        plugins = (plugins,)
    return list(dict.fromkeys(plugins))


def _form_names(pack: Pack) -> list[str]:
    return [pack.name] if pack.plugin_id is None else [pack.name, pack.plugin_id]


def _pack_settings(
    settings: Mapping[str, Mapping[str, Any]] | None, fetch_policy: Any
) -> dict[str, Mapping[str, Any]]:
    """Each Plugin name's settings: ``settings`` as given, and ``fetch_policy`` (when given) as
    the ``fetch_policy`` setting of the web Plugins (``DEFAULT_PLUGINS``), under any the caller
    gave them."""
    if settings is not None and not isinstance(settings, Mapping):
        raise TypeError(
            f"settings maps a Plugin's name to its settings, not {type(settings).__name__}"
        )
    by_plugin: dict[str, Mapping[str, Any]] = dict(settings or {})
    if fetch_policy is not None:
        for name in DEFAULT_PLUGINS:
            by_plugin[name] = {"fetch_policy": fetch_policy, **by_plugin.get(name, {})}
    return by_plugin


def _resolve_forms(
    names: list[str], given: list[Pack], context: Callable[[str], PackContext]
) -> list[tuple[Pack, list[Dialect]]]:
    """Each Pack the Host serves, with the forms ``names`` ask for, in order of first mention.

    Every name is checked before any Plugin is called, so an unknown name is refused without
    side effects (a Plugin may read the environment)."""
    offered: dict[str, tuple[Pack, Dialect]] = {}
    for pack in given:
        offered[pack.name] = (pack, "runvil")
        if pack.plugin_id is not None:
            offered[pack.plugin_id] = (pack, "promptforge")
    missing = [name for name in names if name not in offered]
    installed = installed_plugins() if missing else {}
    for name in missing:
        if name not in installed:
            known = ordered_names([*offered, *installed], DEFAULT_PLUGINS)
            if not known:  # runvil's own Plugins are package metadata: a tree not installed
                raise ValueError(
                    f"unknown Plugin {name!r}; no Plugin is installed (runvil registers its "
                    "own as entry points: install it, or pip install -e . in a checkout)"
                )
            raise ValueError(f"unknown Plugin {name!r}; this host knows {', '.join(known)}")
    built: dict[int, Pack] = {}
    forms: dict[int, tuple[Pack, list[Dialect]]] = {}  # by identity: a Pack need not hash
    for name in names:
        if name in offered:
            pack, dialect = offered[name]
        else:
            plugin = load_plugin(name, installed)
            if id(plugin) not in built:
                made = plugin(context(name))
                if not isinstance(made, Pack):
                    raise TypeError(f"Plugin {name} built {type(made).__name__}, not a Pack")
                built[id(plugin)] = made
            pack = built[id(plugin)]
            if name == pack.name:
                dialect = "runvil"
            elif name == pack.plugin_id:
                dialect = "promptforge"
            else:
                raise ValueError(f"Plugin {name} built the Pack {pack.name}, not {name}")
        _, dialects = forms.setdefault(id(pack), (pack, []))
        if dialect not in dialects:
            dialects.append(dialect)
    _check_ids(pack for pack, _ in forms.values())
    return list(forms.values())


def _label(pack: Pack, dialect: Dialect) -> str:
    """How a form names its Pack in reasons: the Pack id, or the Plugin id."""
    if dialect == "runvil":
        return pack_id(pack)
    assert pack.plugin_id is not None
    return pack.plugin_id


def _pack_object(
    pack: Pack, dialect: Dialect, reason: str | None, impls: Sequence[ToolImplementation]
) -> PackObject:
    if dialect == "runvil":
        obj = PackObject(pack_id(pack), pack.name, "runvil", reason=reason)
    else:
        assert pack.plugin_id is not None
        obj = PackObject(pack.plugin_id, pack.plugin_id, "promptforge", reason=reason)
    if reason is None:
        tools = tuple(tool_object(impl.tool, dialect, obj) for impl in impls)
        object.__setattr__(obj, "tools", tools)
    return obj


def _entries(values: Iterable[str], key: str) -> Iterator[str]:
    if isinstance(values, str):
        values = (values,)
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"{key}: entries are strings, not {type(value).__name__}")
        yield value
