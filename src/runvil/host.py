"""The Host: where tools are set up, declared, offered, approved, called and enveloped.

Everything above this module (the prompt runtime, the model loop, the MCP server, the CLI) reaches
the web tools through a :class:`Host` and the :class:`Run` it starts; nothing below it (the tools
themselves) knows about Lua, models, MCP or envelopes. The Host therefore owns the rules that are
the same for every face:

* which Packs / Plugins exist and whether each one built (and if not, the exact reason);
* the requirements notice a prompt gets when the Host cannot satisfy its declarations;
* the read-only Tool and Pack objects, wire names and the schema a model is shown;
* the approval hook asked before a network tool's first call;
* the untrusted envelope, with one nonce per run, added where a result leaves the host;
* cancelling calls still in flight when a run ends.

A Host is cheap to build and is meant to live as long as the application (one CLI invocation, one
MCP server process). A :class:`Run` is one prompt run or one MCP session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import json
import logging
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import Any, Final

from runvil.envelope import envelope as _envelope
from runvil.envelope import is_nonce, new_nonce
from runvil.errors import RunError, RunErrorKind, ToolError, ToolErrorKind
from runvil.tools import FrozenDict, PackObject, Tool, ToolObject, freeze
from runvil.web import pack as web_pack

__all__ = [
    "DEFAULT_PLUGINS",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "Host",
    "OfferError",
    "OfferedTool",
    "Run",
    "ToolResult",
    "Toolbox",
    "refusal_message",
    "requirements_notice",
    "tool_call_failure",
]

logger = logging.getLogger("runvil.host")

#: The Plugins a default ``Host()`` calls: the web Plugin in both forms, backed by the same tools.
DEFAULT_PLUGINS: tuple[str, ...] = (web_pack.PACK_NAME, web_pack.PLUGIN_ID)
_KNOWN_PLUGINS: tuple[str, ...] = DEFAULT_PLUGINS

NOTICE_HEADING: Final = "the environment cannot satisfy this prompt:"


class _FromEnv:
    """Sentinel: "no search provider argument given, read one from the environment"."""

    def __repr__(self) -> str:
        return "<search provider from the environment>"


_FROM_ENV: Final = _FromEnv()


# ----------------------------------------------------------------------------------------------
# Approval
# ----------------------------------------------------------------------------------------------


class Approval(enum.Enum):
    """An answer to an approval request (seed 002's decisions)."""

    ONCE = "once"
    """Allow this call; ask again next time."""
    ALWAYS = "always"
    """Allow this call and every later call of the same tool on this Host."""
    REFUSE = "refuse"
    """Refuse this call: it fails with a ToolError the model can read; ask again next time."""


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approval prompt shows: the tool (``web/fetch`` / ``web/search``, whatever form or
    alias the caller used) and the detail (the URL or the query, verbatim)."""

    tool_id: str
    detail: str


#: ``approve(request)`` answers with an :class:`Approval` (or ``True`` / ``False`` for once /
#: refuse), directly or as an awaitable. A plain function runs on the event loop, so an
#: interactive approver should be async (e.g. ``await asyncio.to_thread(ask, request)``).
Approver = Callable[[ApprovalRequest], "Approval | bool | Awaitable[Approval | bool]"]


def refusal_message(tool: Tool) -> str:
    """The text of the ToolError a refused call fails with, e.g.
    ``web_fetch: the user refused this call; do not retry it``. It keeps the tool's own message
    prefix, like every other web tool message, whatever name the model called the tool by."""
    return f"{tool.wire_name}: the user refused this call; do not retry it"


# ----------------------------------------------------------------------------------------------
# Errors and notices
# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------
# Results and the model-facing tool scope
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolResult:
    """What goes back to a model (or an MCP client) for one tool call.

    ``text`` is the enveloped tool text, or the enveloped bare message of a hard failure
    (``is_error`` True), or, for a name the model was never offered, the host's own plain notice
    (``is_error`` True, not enveloped: it is not third-party text).
    """

    text: str
    is_error: bool = False
    error_kind: ToolErrorKind | None = None


@dataclass(frozen=True)
class OfferedTool:
    """One tool as a model round advertises it: the name the model calls (the wire name, or the
    alias in the promptforge form), the description (catalog or override) and the JSON schema."""

    name: str
    description: str
    tool: ToolObject

    @property
    def schema(self) -> dict[str, Any]:
        """A fresh copy of the JSON argument schema."""
        return self.tool.schema_dict()

    def spec(self) -> dict[str, Any]:
        """Neutral shape: ``{"name", "description", "parameters"}`` (a model client maps it to
        OpenAI's ``function`` or Anthropic's ``input_schema``)."""
        return {"name": self.name, "description": self.description, "parameters": self.schema}


class Toolbox:
    """The tool scope of one model conversation: what the model is shown and may call.

    Tools are advertised in first-offer order; offering a tool again keeps its place (a new
    description override replaces the old one). A model can reach only a name it was offered.
    """

    def __init__(self, run: Run) -> None:
        self._run = run
        self._offered: dict[str, OfferedTool] = {}

    def offer(
        self, tool: ToolObject | str, *, description: str | None = None
    ) -> OfferedTool:
        """Offer ``tool`` (a Tool object, a tool id or a tool path) to the model.

        The model calls it by its wire name (runvil form) or its alias (promptforge form: the
        Tool object's ``name``). ``description`` overrides what the model is shown, never the
        Tool object's ``description`` field. Raises ``LookupError`` for an unknown tool.
        """
        obj = self._run.host.resolve(tool)
        name = obj.name if obj.dialect == "promptforge" else obj.wire_name
        offered = OfferedTool(
            name=name,
            description=description if description is not None else obj.description,
            tool=obj,
        )
        self._offered[name] = offered
        return offered

    @property
    def offered(self) -> tuple[OfferedTool, ...]:
        """The offered tools in first-offer order."""
        return tuple(self._offered.values())

    def specs(self) -> list[dict[str, Any]]:
        """``[{"name", "description", "parameters"}]`` for every offered tool, in order."""
        return [offered.spec() for offered in self._offered.values()]

    def get(self, name: str) -> OfferedTool | None:
        """The offered tool a model calls ``name``, if any."""
        return self._offered.get(name)

    async def dispatch(self, name: str, args: Any) -> ToolResult:
        """Run a model's tool call and return what goes back to the model.

        Soft results and hard failures alike come back as the result text, enveloped, so the
        conversation goes on (seeds 000/001: "the loop goes on"). ``args`` may be the decoded
        JSON object or the raw JSON text the model sent.
        """
        offered = self._offered.get(name)
        if offered is None:
            names = ", ".join(self._offered) or "none"
            return ToolResult(
                f"unknown tool {name}; the tools offered are: {names}",
                is_error=True,
                error_kind=ToolErrorKind.InvalidArguments,
            )
        if isinstance(args, str | bytes):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                args = {}  # not an argument object: the tool names what is missing
        try:
            text = await self._run.call(offered.tool, args, envelope=True)
        except ToolError as err:
            return ToolResult(self._run.untrusted(err.message), True, err.kind)
        return ToolResult(text)


# ----------------------------------------------------------------------------------------------
# Runs
# ----------------------------------------------------------------------------------------------


class Run:
    """One prompt run or one MCP session: one nonce, and the calls it has in flight.

    Use ``async with host.run() as run:`` (or ``run = host.start_run()`` ... ``await
    run.aclose()``). Closing a run cancels every call still in flight and waits for it to finish
    unwinding, so no fetch outlives its run and every connection it opened is closed.
    """

    def __init__(self, host: Host, nonce: str | None = None) -> None:
        if nonce is None:
            nonce = new_nonce()
        elif not is_nonce(nonce):
            raise ValueError("a run nonce is 16 lowercase hex characters")
        self.host = host
        self.nonce = nonce
        self._inflight: set[asyncio.Task[str]] = set()
        self._closing = False

    @property
    def closed(self) -> bool:
        """Whether the run has ended (no further calls are accepted)."""
        return self._closing

    @property
    def inflight(self) -> int:
        """How many tool calls are running right now."""
        return len(self._inflight)

    def untrusted(self, text: str) -> str:
        """``text`` in this run's untrusted envelope (Lua's ``untrusted(s)``)."""
        return _envelope(text, self.nonce)

    def toolbox(self) -> Toolbox:
        """A fresh tool scope for one model conversation in this run."""
        return Toolbox(self)

    async def call(self, tool: ToolObject | str, args: Any, *, envelope: bool = True) -> str:
        """Call ``tool`` (a Tool object, a tool id such as ``web/fetch`` or a tool path such as
        ``promptforge/web/fetch``) with ``args`` (the JSON argument object).

        Returns the tool's text (a success or a soft failure), in this run's envelope unless
        ``envelope=False``. A hard failure raises the tool's ``ToolError`` unchanged; an unknown
        or unavailable tool raises ``ToolError(InvalidArguments, ...)`` (see docs/host.md); a
        refused approval raises ``ToolError(Other, refusal_message(...))``.
        """
        if self._closing:
            raise RuntimeError("this run has ended")
        obj = self.host._resolve_for_call(tool)
        task: asyncio.Task[str] = asyncio.ensure_future(self.host._invoke(obj, args))
        self._inflight.add(task)
        try:
            text = await task
        except asyncio.CancelledError:
            task.cancel()
            current = asyncio.current_task()
            if self._closing and task.cancelled() and (current is None or not current.cancelling()):
                raise ToolError(
                    ToolErrorKind.Other,
                    f"{obj.catalog.wire_name}: the run ended before the call finished",
                ) from None
            raise
        finally:
            self._inflight.discard(task)
        return self.untrusted(text) if envelope else text

    async def aclose(self) -> None:
        """End the run: refuse new calls, cancel the ones in flight and wait for them to unwind."""
        self._closing = True
        pending = list(self._inflight)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def __aenter__(self) -> Run:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


# ----------------------------------------------------------------------------------------------
# The Host
# ----------------------------------------------------------------------------------------------


class Host:
    """Sets up the Plugins once and hands out Tool objects, requirements checks and runs.

    ``Host(plugins=("runvil/web", "promptforge/web"), config={}, search_provider=<from env>,
    network=None, approve=None, *, fetch_policy=None)``:

    * ``plugins``: the Plugins the Host calls. ``runvil/web`` adds the web Pack (tool ids
      ``web/fetch``, ``web/search``); ``promptforge/web`` adds the same tools in the promptforge
      form (paths ``promptforge/web/fetch``, ``promptforge/web/search``). ``()`` is a Host with
      no web tools at all.
    * ``config``: maps a Plugin's key (``web``) to its configuration; the web Plugin takes none,
      so only ``None`` or ``{}`` is accepted there (anything else leaves it unavailable).
    * ``search_provider``: the Host-wide search service. Leave it out to read one from the
      environment (``provider_from_env(network=network)``; a misconfigured environment raises
      ``ValueError``); ``None`` means the Host provides none (the Pack is then unavailable).
    * ``network``: the network seam for fetches (``None``: the real network).
    * ``approve``: asked before a network tool's call; default: every call is approved.
    * ``fetch_policy``: for embedding applications and tests only (a stricter policy); a Pack or
      prompt can never change it. Default: ``FetchPolicy()``.
    """

    def __init__(
        self,
        plugins: Iterable[str] = DEFAULT_PLUGINS,
        config: Mapping[str, Any] | None = None,
        search_provider: Any = _FROM_ENV,
        network: Any = None,
        approve: Approver | None = None,
        *,
        fetch_policy: Any = None,
    ) -> None:
        if isinstance(plugins, str):
            plugins = (plugins,)
        names = tuple(dict.fromkeys(plugins))
        for name in names:
            if name not in _KNOWN_PLUGINS:
                known = ", ".join(_KNOWN_PLUGINS)
                raise ValueError(f"unknown Plugin {name!r}; this host knows {known}")
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(
                f"config maps a Plugin's key to its configuration, not {type(config).__name__}"
            )
        config = dict(config or {})
        if search_provider is _FROM_ENV:
            search_provider = _provider_from_env(network)
        self._approve = approve
        self._always: set[str] = set()
        # Per event loop: a Host may outlive a loop (one ``asyncio.run`` per CLI command), and a
        # lock is bound to the loop it first waited in.
        self._approval_locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()
        self._default_run: Run | None = None
        self._closed = False

        forms: tuple[web_pack.Form, ...] = ("runvil", "promptforge")
        reasons = {form: web_pack.setup_problem(config, search_provider, form) for form in forms}
        wanted: dict[web_pack.Form, bool] = {
            "runvil": web_pack.PACK_NAME in names,
            "promptforge": web_pack.PLUGIN_ID in names,
        }
        self._web: web_pack.WebTools | None = None
        if any(wanted[form] and reasons[form] is None for form in wanted):
            self._web = web_pack.build_web_tools(search_provider, network, fetch_policy)

        packs: dict[str, PackObject] = {}
        plugin_objects: dict[str, PackObject] = {}
        tools: dict[str, ToolObject] = {}
        paths: dict[str, ToolObject] = {}
        if wanted["runvil"]:
            pack = self._build_pack("runvil", reasons["runvil"])
            packs[pack.id] = pack
            tools.update((tool.id, tool) for tool in pack.tools)
        if wanted["promptforge"]:
            plugin = self._build_pack("promptforge", reasons["promptforge"])
            plugin_objects[plugin.id] = plugin
            paths.update((tool.id, tool) for tool in plugin.tools)
        self._packs = packs
        self._plugins = plugin_objects
        self._tools = tools
        self._paths = paths

    # -- building ------------------------------------------------------------------------------

    def _build_pack(self, form: web_pack.Form, reason: str | None) -> PackObject:
        if form == "runvil":
            pack = PackObject(web_pack.PACK_ID, web_pack.PACK_NAME, "runvil", reason=reason)
        else:
            pack = PackObject(web_pack.PLUGIN_ID, web_pack.PLUGIN_ID, "promptforge", reason=reason)
        if reason is not None or self._web is None:
            return pack
        objects = tuple(
            self._tool_object(self._web.by_name[name].tool, form, pack)
            for name in web_pack.TOOL_NAMES
        )
        object.__setattr__(pack, "tools", objects)
        return pack

    @staticmethod
    def _tool_object(catalog: Tool, form: web_pack.Form, pack: PackObject) -> ToolObject:
        schema = freeze(catalog.parameters)
        if form == "runvil":
            return ToolObject(
                id=catalog.id,
                name=catalog.name,
                description=catalog.description,
                wire_name=catalog.wire_name,
                parameters=schema,
                untrusted=catalog.untrusted,
                dialect="runvil",
                schema=schema,
                catalog=catalog,
                pack=pack,
            )
        return ToolObject(
            id=f"{pack.id}/{catalog.name}",
            name=catalog.name,
            description=catalog.description,
            wire_name=catalog.name,
            parameters=FrozenDict(),
            untrusted=False,
            dialect="promptforge",
            schema=schema,
            catalog=catalog,
            pack=pack,
        )

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
        """The runvil Pack a ``uses:`` entry names: a bare entry means the runvil Pack of that
        id, so ``web`` and ``runvil/web`` are the same Pack."""
        pack_id = ref.split("/", 1)[1] if ref.startswith("runvil/") else ref
        if "/" in pack_id:
            return None
        return self._packs.get(pack_id)

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

    def _resolve_for_call(self, tool: ToolObject | str) -> ToolObject:
        try:
            return self.resolve(tool)
        except LookupError as err:
            raise ToolError(ToolErrorKind.InvalidArguments, str(err.args[0])) from None

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
        return Run(self, nonce)

    start_run = run

    async def call(self, tool: ToolObject | str, args: Any, *, envelope: bool = True) -> str:
        """Call a tool in the Host's implicit run (created on first use, ended by
        :meth:`aclose`): see :meth:`Run.call`."""
        if self._default_run is None:
            self._default_run = self.run()
        return await self._default_run.call(tool, args, envelope=envelope)

    async def aclose(self) -> None:
        """End the implicit run and close the tools' connections. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._default_run is not None:
            await self._default_run.aclose()
        if self._web is not None:
            await self._web.aclose()

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the call path -------------------------------------------------------------------------

    async def _invoke(self, obj: ToolObject, args: Any) -> str:
        assert self._web is not None  # a ToolObject exists only for built tools
        catalog = obj.catalog
        impl = self._web.by_name[catalog.name]
        # The tools take one JSON argument object; anything else (None, an array, a string) is
        # no argument object at all, and the tool then names what is missing in its own words.
        args = dict(args) if isinstance(args, Mapping) else {}
        detail = web_pack.approval_detail(catalog.name, args)
        if detail is not None and self._approve is not None:
            await self._ask(catalog, detail)
        try:
            return await impl.call(args)
        except (ToolError, asyncio.CancelledError):
            raise
        except Exception as exc:
            logger.exception("tool %s raised an unexpected exception", catalog.id)
            raise ToolError(
                ToolErrorKind.Other,
                f"{catalog.wire_name}: internal error ({type(exc).__name__})",
            ) from exc

    async def _ask(self, catalog: Tool, detail: str) -> None:
        if catalog.id in self._always:
            return
        locks = self._approval_locks.setdefault(asyncio.get_running_loop(), {})
        lock = locks.setdefault(catalog.id, asyncio.Lock())
        async with lock:  # one prompt at a time per tool, so "always" covers calls that waited
            if catalog.id in self._always:
                return
            assert self._approve is not None
            answer = self._approve(ApprovalRequest(catalog.id, detail))
            if inspect.isawaitable(answer):
                answer = await answer
            decision = _decision(answer)
            if decision is Approval.ALWAYS:
                self._always.add(catalog.id)
            elif decision is Approval.REFUSE:
                raise ToolError(ToolErrorKind.Other, refusal_message(catalog))


def _decision(answer: object) -> Approval:
    if isinstance(answer, Approval):
        return answer
    if answer is True:
        return Approval.ONCE
    if answer is False:
        return Approval.REFUSE
    raise TypeError(f"an approver must answer with an Approval, not {answer!r}")


def _entries(values: Iterable[str], key: str) -> Iterator[str]:
    if isinstance(values, str):
        values = (values,)
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"{key}: entries are strings, not {type(value).__name__}")
        yield value


def _provider_from_env(network: Any) -> Any:
    """The provider the environment configures, speaking through the Host's network seam.
    A misconfigured environment raises ``ValueError`` naming the variable at fault."""
    from runvil.web.search import provider_from_env

    return provider_from_env(network=network)

