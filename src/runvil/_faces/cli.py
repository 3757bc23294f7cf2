"""The ``runvil`` command line: the web tools for a person at a terminal or a shell pipeline.

Two audiences, one rule each. A pipeline gets the exact tool text on stdout and an exit code it
can branch on (0 success, 1 soft failure with the message on stdout, 2 hard failure with the
message on stderr, 130 on Ctrl-C). A person at a terminal gets the same words, rendered: markdown
as markdown, search results as a list, and a spinner on stderr while the network works. Nothing
is ever printed as a traceback; ``RUNVIL_DEBUG=1`` shows one for an unexpected internal error.

Every command reads its configuration and hands it to :func:`~runvil._faces.wiring.wire`, the
one path from configuration to Hosts, and calls its tool through a run of that Host, as every
face does (``fetch`` reads the fetch's typed outcome from the call's result). The reference is
``docs/cli.md``; the messages are catalogued in ``docs/errors.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from runvil._errors import RunError
from runvil._faces.config import SETTINGS, ConfigError, Setting, load_config
from runvil._faces.terminal import terminal_safe
from runvil._faces.wiring import Wiring, wire

if TYPE_CHECKING:
    from runvil._host import Approver, CallResult, Host
    from runvil.web import FetchPolicy, Network
    from runvil.web._fetch.outcome import FetchOutcome

T = TypeVar("T")

EXIT_OK = 0
EXIT_SOFT = 1
EXIT_HARD = 2
EXIT_INTERRUPTED = 130

@dataclass(frozen=True)
class Outcome:
    """One tool call as the CLI reports it.

    ``error_kind`` is ``None`` on success, ``"Soft"`` for a soft fetch failure and the
    :class:`~runvil._errors.ToolErrorKind` name for a hard failure.
    """

    ok: bool
    text: str
    error_kind: str | None = None
    fetched: FetchOutcome | None = field(default=None, compare=False, repr=False)
    """A fetch's own outcome, whose fields the terminal rendering and the hints read."""

    @property
    def exit_code(self) -> int:
        if self.ok:
            return EXIT_OK
        return EXIT_SOFT if self.error_kind == "Soft" else EXIT_HARD

    def as_json(self) -> str:
        return json.dumps(
            {"ok": self.ok, "text": self.text, "error_kind": self.error_kind}, ensure_ascii=False
        )


def fetch_outcome(fetched: FetchOutcome) -> Outcome:
    """A fetch as the CLI reports it: the tool's exact text, and the kind of a failure, read
    from the fetch's own outcome (a soft failure's text is the call's whole result)."""
    return Outcome(fetched.ok, fetched.model_text(), fetched.error_kind, fetched)


# -- running one tool call --------------------------------------------------------------------


async def call_once(host: Host, tool: str, args: Mapping[str, Any]) -> CallResult:
    """One call of ``tool`` through ``host``, in a run of its own, as every face calls a tool;
    the Host's connections are closed afterwards. A tool's own bug is raised as what it was, so
    the command ends as any internal error does (``runvil: internal error: ...``)."""
    from runvil._host.invoker import ToolCrashed

    async with host, host.run() as run:
        result = await run.invoke(tool, dict(args))
    if isinstance(result.error, ToolCrashed) and result.error.__cause__ is not None:
        raise result.error.__cause__
    return result


def fetched_outcome(result: CallResult) -> FetchOutcome:
    """The fetch's own outcome from its call: the tool's typed outcome, or its hard failure read
    into one."""
    from runvil.web._fetch.outcome import FetchOutcome

    if isinstance(result.outcome, FetchOutcome):
        return result.outcome
    assert result.error is not None, "web/fetch returns its outcome or fails hard"
    return FetchOutcome.from_error(result.error)


async def run_fetch(args: Mapping[str, Any], host: Host) -> Outcome:
    """Run one ``web/fetch`` call through the command's Host."""
    return fetch_outcome(fetched_outcome(await call_once(host, "web/fetch", args)))


async def run_search(args: Mapping[str, Any], host: Host) -> Outcome:
    """Run one ``web/search`` call through the command's Host."""
    result = await call_once(host, "web/search", args)
    if result.error is not None:
        return Outcome(False, result.text, result.error.kind.value)
    return Outcome(True, result.text)


# -- terminal output --------------------------------------------------------------------------


def _stdout_is_tty() -> bool:
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _stderr_is_tty() -> bool:
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


def _spinner(message: str) -> contextlib.AbstractContextManager[Any]:
    """A spinner on stderr when a person is watching it; nothing otherwise."""
    if not _stderr_is_tty():
        return contextlib.nullcontext()
    from rich.console import Console

    return Console(stderr=True).status(message, spinner="dots")


def _run(coro: Awaitable[T], spinner: str | None = None) -> T:
    """Run a coroutine to completion, turning Ctrl-C into exit 130."""
    import asyncio

    try:
        with _spinner(spinner) if spinner else contextlib.nullcontext():
            return asyncio.run(_as_coroutine(coro))
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)


async def _as_coroutine(aw: Awaitable[T]) -> T:
    return await aw


def _render_fetch_tty(fetched: FetchOutcome) -> None:
    """A page for a person: its header dimmed, then its text (markdown unless it is plain)."""
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console()
    header = terminal_safe(fetched.header().removesuffix("\n\n"))
    body = terminal_safe(fetched.text)
    console.print(header, style="dim", markup=False, highlight=False)
    console.print()
    if fetched.extraction == "plain":
        console.print(body, markup=False, highlight=False, soft_wrap=True)
    else:
        console.print(Markdown(body))


def _render_search_tty(text: str) -> None:
    from rich.console import Console
    from rich.text import Text

    console = Console()
    data = json.loads(text)
    results = data.get("results", [])
    if not results:
        console.print(f"No results for {terminal_safe(repr(data.get('query', '')))}.", markup=False)
        return

    def field(row: Mapping[str, Any], key: str) -> str:
        value = row.get(key)
        return terminal_safe(value) if isinstance(value, str) else ""

    for i, row in enumerate(results, 1):
        line = Text(f"{i}. ", style="bold")
        line.append(field(row, "title") or "(untitled)", style="bold")
        console.print(line)
        console.print(Text("   " + field(row, "url"), style="cyan underline"))
        meta = " · ".join(x for x in (field(row, "site_name"), field(row, "age")) if x)
        if meta:
            console.print(Text("   " + meta, style="dim"))
        if field(row, "description"):
            console.print(Text("   " + field(row, "description")))
        for snippet in row.get("extra_snippets", []):
            console.print(Text("   › " + terminal_safe(str(snippet)), style="dim"))
        console.print()


def _write(text: str, *, err: bool = False) -> None:
    """``text`` and a newline, as UTF-8 bytes, unaltered. (``click.echo`` would strip escape
    sequences when the stream is not a terminal, and piped output must be the exact text.)"""
    stream = sys.stderr if err else sys.stdout
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is None:  # a replaced stream without bytes underneath (e.g. a test capture)
            stream.write(text + "\n")
        else:
            buffer.write((text + "\n").encode("utf-8", "surrogateescape"))
            buffer.flush()
        stream.flush()
    except BrokenPipeError:
        # The reader went away (`runvil fetch URL | head -1`): nothing more can be said there,
        # and Python must not complain about it again while flushing at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _error(message: str) -> None:
    """A message on stderr, red on a terminal, exact when redirected."""
    if _stderr_is_tty():
        from rich.console import Console

        Console(stderr=True).print(
            terminal_safe(message), style="red", markup=False, highlight=False
        )
    else:
        _write(message, err=True)


def _finish(
    outcome: Outcome,
    as_json: bool,
    render: Callable[[str], None] | None,
    hints: Sequence[str] = (),
) -> NoReturn:
    """Print an outcome the way the CLI promises and exit with its code. ``hints`` follow the
    message on stderr (never with ``--json``)."""
    if as_json:
        _write(outcome.as_json())
    elif outcome.ok:
        if render is not None and _stdout_is_tty():
            render(outcome.text)
        else:
            _write(outcome.text)
    elif outcome.error_kind == "Soft":
        _write(terminal_safe(outcome.text) if _stdout_is_tty() else outcome.text)
    else:
        _error(outcome.text)
    if not as_json:
        for hint in hints:
            _write(terminal_safe(hint) if _stderr_is_tty() else hint, err=True)
    sys.exit(outcome.exit_code)


@contextlib.contextmanager
def _failures() -> Iterator[None]:
    """Configuration and internal failures end the command with exit 2, never a traceback."""
    try:
        yield
    except ConfigError as err:
        _error(f"runvil: {err}")
        sys.exit(EXIT_HARD)
    except (SystemExit, KeyboardInterrupt, click.exceptions.Exit, click.ClickException):
        raise
    except Exception as err:
        if os.environ.get("RUNVIL_DEBUG"):
            raise
        _error(f"runvil: internal error: {type(err).__name__}: {err}")
        sys.exit(EXIT_HARD)


def _wiring(
    ctx: click.Context, config_path: str | None, ask: Approver | None = None, **flags: Any
) -> Wiring:
    """The command's configuration, wired: flags over the environment over ``runvil.toml``,
    the network and policy :func:`main` was given (the real ones for the console script), and
    ``ask``, how this command asks a person about a call (approval mode ``ask``)."""
    obj = ctx.find_root().obj or {}
    path = config_path or obj.get("config_path")
    config = load_config(flags, config_path=Path(path) if path else None)
    return wire(config, network=obj.get("network"), policy=obj.get("policy"), ask=ask)


# -- commands ---------------------------------------------------------------------------------

_JSON_HELP = 'Print {"ok":...,"text":...,"error_kind":...} instead.'
_config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), default=None,
    help="Configuration file to use instead of ~/.config/runvil/runvil.toml.",
)
_provider_option = click.option(
    "--search-provider", default=None, metavar="NAME",
    help="Search provider: duckduckgo, brave, tavily, searxng, gateway or none.",
)


def _has_option(setting: Setting, command: str) -> bool:
    """Whether the command ``command`` takes ``setting``'s option."""
    return (
        setting.option is not None and setting.flag is not None
        and (setting.commands is None or command in setting.commands)
    )


def _option(setting: Setting) -> click.Option:
    """Another Pack's declared setting as an option: its value reaches :func:`load_config` as
    a flag (``None``: not given)."""
    assert setting.option is not None and setting.flag is not None
    return click.Option(
        [setting.option, setting.flag], default=None, metavar=setting.metavar,
        multiple=setting.multiple, help=setting.help or f"Sets {setting.key} for this run.",
    )


def _setting_options(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options of every setting runvil declares (the faces' and the web Pack's) that has
    one, for the command ``name`` (every command that reads the configuration has them, unless
    a setting names its commands). Another installed Pack's are added when the command runs
    (:class:`_PackSettingsCommand`), so ``runvil --help`` loads no Pack."""

    def add(command: Callable[..., Any]) -> Callable[..., Any]:
        for setting in reversed(SETTINGS):
            if _has_option(setting, name):
                assert setting.option is not None and setting.flag is not None
                command = click.option(
                    setting.option, setting.flag, default=None, metavar=setting.metavar,
                    multiple=setting.multiple,
                    help=setting.help or f"Sets {setting.key} for this run.",
                )(command)
        return command

    return add


class _PackSettingsCommand(click.Command):
    """A command that also takes the options of the settings other installed Packs declare,
    read the first time the command parses its arguments or shows its help."""

    _with_packs = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not self._with_packs:
            self._with_packs = True
            from runvil._faces.config import installed_pack_settings

            at = next(
                (i for i, p in enumerate(self.params) if p.name == "config_path"),
                len(self.params),
            )
            for settings in installed_pack_settings().values():
                for setting in settings:
                    if self.name is not None and _has_option(setting, self.name):
                        self.params.insert(at, _option(setting))
                        at += 1
        return super().get_params(ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="runvil")
@_config_option
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """Safe, exact web access for language models: web_fetch and web_search.

    Exit codes: 0 success, 1 soft failure (message on stdout), 2 hard failure
    (message on stderr), 130 interrupted.
    """
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path
    if os.environ.get("RUNVIL_DEBUG", "").strip():
        _debug_log()


def _debug_log() -> None:
    """``RUNVIL_DEBUG=1``: runvil's debug lines on stderr (``runvil: debug: runvil.net: TLS
    certificate of ... refused: ...``), so a plain "network error" shows its cause."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("runvil: debug: %(name)s: %(message)s"))
    logger = logging.getLogger("runvil")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


@cli.command(cls=_PackSettingsCommand)
@click.argument("url")
@click.option("--max-chars", type=int, default=None, help="Characters to return (1..40000).")
@click.option("--raw", is_flag=True, default=False, help="Render the whole page, not the article.")
@click.option("--start", "start_index", type=int, default=None, metavar="N",
              help="Start at character N (a next_start_index from an earlier fetch).")
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@_setting_options("fetch")
@_config_option
@click.pass_context
def fetch(
    ctx: click.Context, /, url: str, max_chars: int | None, raw: bool, start_index: int | None,
    as_json: bool, config_path: str | None, **settings: Any,
) -> None:
    """Fetch URL and print its main content (markdown for HTML pages)."""
    args: dict[str, Any] = {"url": url}
    if max_chars is not None:
        args["max_chars"] = max_chars
    if raw:
        args["raw"] = True
    if start_index is not None:
        args["start_index"] = start_index
    from runvil._faces.hints import fetch_hints
    from runvil.web._fetch.arguments import reads_on

    with _failures():
        wiring = _wiring(ctx, config_path, **settings)
        host = wiring.command_host("fetch")
        if start_index is not None and not reads_on(host.tools["web/fetch"].schema):
            raise ConfigError("--start needs fetch.continuation, which is off")
        outcome = _run(run_fetch(args, host), spinner=f"Fetching {url}")
        fetched = outcome.fetched
        assert fetched is not None
        hints = [] if outcome.ok else fetch_hints(url, fetched, wiring.face_policy.private_hosts)
    _finish(outcome, as_json, lambda text: _render_fetch_tty(fetched), hints)


@cli.command(cls=_PackSettingsCommand)
@click.argument("query")
@click.option("--count", type=int, default=None, help="Maximum number of results (1..20).")
@click.option("--freshness", default=None, metavar="pd|pw|pm|py", help="Past day/week/month/year.")
@click.option("--country", default=None, metavar="CODE", help="Country code, e.g. us.")
@click.option("--lang", default=None, metavar="CODE", help="Search language code, e.g. en.")
@click.option("--safesearch", default=None, metavar="off|moderate|strict", help="SafeSearch level.")
@click.option("--site", multiple=True, metavar="DOMAIN", help="Keep only DOMAIN (repeatable).")
@click.option("--exclude-site", multiple=True, metavar="DOMAIN", help="Drop DOMAIN (repeatable).")
@click.option("--json", "as_json", is_flag=True, help=_JSON_HELP)
@_provider_option
@_setting_options("search")
@_config_option
@click.pass_context
def search(
    ctx: click.Context, /, query: str, count: int | None, freshness: str | None,
    country: str | None, lang: str | None, safesearch: str | None, site: tuple[str, ...],
    exclude_site: tuple[str, ...], as_json: bool, search_provider: str | None,
    config_path: str | None, **settings: Any,
) -> None:
    """Search the web for QUERY and print the results."""
    args: dict[str, Any] = {"query": query}
    for key, value in (
        ("count", count), ("freshness", freshness), ("country", country),
        ("search_lang", lang), ("safesearch", safesearch),
    ):
        if value is not None:
            args[key] = value
    if site:
        args["include_domains"] = list(site)
    if exclude_site:
        args["exclude_domains"] = list(exclude_site)
    with _failures():
        wiring = _wiring(ctx, config_path, search_provider=search_provider, **settings)
        host = wiring.command_host("search")
        outcome = _run(run_search(args, host), spinner=f"Searching for {query!r}")
    _finish(outcome, as_json, _render_search_tty)


@cli.command(name="config", cls=_PackSettingsCommand)
@click.option("--json", "as_json", is_flag=True, help="Print the configuration as JSON.")
@_provider_option
@_setting_options("config")
@_config_option
@click.pass_context
def config_command(
    ctx: click.Context, /, as_json: bool, search_provider: str | None, config_path: str | None,
    **settings: Any,
) -> None:
    """Show the effective configuration (secrets masked) and where each setting came from."""
    from runvil._faces.config import describe
    from runvil.web._fetch.browser.discovery import describe_browser

    with _failures():
        wiring = _wiring(ctx, config_path, search_provider=search_provider, **settings)
        data = describe(wiring.config)
        data["browser"] = describe_browser(
            wiring.face_policy.browser, wiring.face_policy.browser_path
        )
    if as_json:
        _write(json.dumps(data, indent=2, ensure_ascii=False))
        return
    _write(_config_text(data))


#: What ``describe`` gives besides the tables of declared settings, and ``[search]`` and
#: ``[fetch]``, which the text shows first.
_NOT_SETTING_TABLES = frozenset({
    "file", "web", "envelope", "approval", "search", "fetch", "models", "providers", "sources",
    "packs", "browser",
})


def _config_text(data: Mapping[str, Any]) -> str:
    """The effective configuration as TOML-like lines, each with its source as a comment."""
    sources: Mapping[str, str] = data["sources"]
    lines = [f"# file: {data['file'] or '(none found)'}"]
    if data.get("browser"):  # what fetch.browser means here (docs/fetch.md)
        shown = data["browser"]
        about = shown.get("off") or f"{shown.get('version') or 'Chromium'} at {shown['executable']}"
        lines.append(f"# browser: {shown['setting']} ({about})")

    def line(key: str, value: Any, dotted: str) -> None:
        shown = json.dumps(value, ensure_ascii=False)
        lines.append(f"{key} = {shown}  # {sources.get(dotted, 'default')}")

    line("web", data["web"], "web")
    line("envelope", data["envelope"], "envelope")
    line("approval", data["approval"], "approval")
    lines.append("")
    lines.append("[search]")
    for key, value in data["search"].items():
        line(key, value, f"search.{key}")
    if data.get("fetch"):
        lines.append("")
        lines.append("[fetch]")
        for key, value in data["fetch"].items():
            line(key, value, f"fetch.{key}")
    for table, entries in data.items():  # [mcp], then another Pack's settings
        if table in _NOT_SETTING_TABLES or not isinstance(entries, Mapping) or not entries:
            continue
        lines.append("")
        lines.append(f"[{table}]")
        for key, value in entries.items():
            line(key, value, f"{table}.{key}")
    lines.append("")
    lines.append("[models]")
    for role, spec in data["models"].items():
        line(role, spec, f"models.{role}")
    for name, entry in data["providers"].items():
        lines.append("")
        lines.append(f"[providers.{name}]")
        for key, value in entry.items():
            if value is not None:
                lines.append(f"{key} = {json.dumps(value)}")
    for name, table in data.get("packs", {}).items():
        lines.append("")
        lines.append(f"[packs.{name}]  # file:{data['file']}")
        entries = table.items() if isinstance(table, Mapping) else [("# value", table)]
        for key, value in entries:
            lines.append(f"{key} = {json.dumps(value, ensure_ascii=False, default=str)}")
    return "\n".join(lines)


@cli.command(cls=_PackSettingsCommand)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--model", "models", multiple=True, metavar="ROLE=PROVIDER:MODEL",
              help="Map a model role to an endpoint (repeatable).")
@click.option("--no-web", is_flag=True, default=False, help="Run without the web Pack.")
@click.option("--approval", default=None, metavar="auto|ask|deny",
              help="How web tool calls are approved.")
@_provider_option
@_setting_options("run")
@_config_option
@click.pass_context
def run(
    ctx: click.Context, /, file: str, models: tuple[str, ...], no_web: bool, approval: str | None,
    search_provider: str | None, config_path: str | None, **settings: Any,
) -> None:
    """Run a prompt file and print its result."""
    from runvil._faces.run import run_prompt_file, terminal_approver

    with _failures():
        roles: dict[str, str] = {}
        for item in models:
            role, sep, spec = item.partition("=")
            if not sep or not role.strip():
                raise ConfigError(f"--model must read ROLE=PROVIDER:MODEL, not {item!r}")
            roles[role.strip()] = spec
        wiring = _wiring(
            ctx, config_path, terminal_approver(), search_provider=search_provider,
            approval=approval, web=False if no_web else None, models=roles, **settings,
        )
        try:
            result = _run(run_prompt_file(Path(file), wiring))
        except RunError as err:
            _error(str(err))
            sys.exit(EXIT_HARD)
    _write(terminal_safe(result) if _stdout_is_tty() else result)


@cli.command(cls=_PackSettingsCommand)
@click.option("--http", "http", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--envelope/--no-envelope", default=None,
              help="Wrap results in the untrusted envelope (default: on).")
@click.option("--no-web", is_flag=True, default=False, help="Serve without the web tools.")
@click.option("--approval", default=None, metavar="auto|deny", help="auto (default) or deny.")
@_provider_option
@_setting_options("mcp")
@_config_option
@click.pass_context
def mcp(
    ctx: click.Context, /, http: str | None, envelope: bool | None, no_web: bool,
    approval: str | None, search_provider: str | None, config_path: str | None,
    **settings: Any,
) -> None:
    """Serve web_fetch and web_search to MCP clients (stdio by default)."""
    import asyncio

    from runvil._faces.mcp import serve

    with _failures():
        wiring = _wiring(
            ctx, config_path, search_provider=search_provider, envelope=envelope,
            approval=approval, web=False if no_web else None, **settings,
        )
        bind: tuple[str, int] | None = None
        if http is not None:
            host, sep, port = http.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
                raise ConfigError(f"--http must read HOST:PORT, not {http!r}")
            bind = (host.strip("[]"), int(port))
        try:
            asyncio.run(serve(wiring, http=bind))
        except KeyboardInterrupt:
            sys.exit(EXIT_INTERRUPTED)


def main(
    args: Sequence[str] | None = None,
    *,
    network: Network | None = None,
    policy: FetchPolicy | None = None,
) -> None:
    """Console entry point (``runvil``).

    ``args`` defaults to ``sys.argv[1:]``. ``network`` and ``policy`` are for a Python program
    that runs the command line in its own process against its own network seam or a stricter
    policy (the test suite's launcher does); the console script passes neither, and no flag,
    file or environment variable can set them.
    """
    cli(args=args, prog_name="runvil", obj={"network": network, "policy": policy})
