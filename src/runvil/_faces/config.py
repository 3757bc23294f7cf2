"""runvil's configuration: one effective setting per key, from a flag, the environment or
``runvil.toml``, in that order of precedence, else its default.

Why this order: a flag is what the user typed for this one run; an environment variable is what
this process was started with (an MCP client's server entry, a CI job, a container), closer to
the run than a file written down once for the account. It is the order most tools use, so a
variable set to override the file does override it. Each setting is resolved on its own, so a
file that names ``provider = "brave"`` still takes the Brave key from ``BRAVE_API_KEY`` when the
file holds no key, and a list given at a higher level replaces the lower one whole.

The file is ``--config PATH`` or ``RUNVIL_CONFIG``, else ``$XDG_CONFIG_HOME/runvil/runvil.toml``
(default ``~/.config/runvil/runvil.toml``) when it exists. A ``runvil.toml`` in the working
directory is read only when named: the working directory of a server an MCP client starts is
hard to predict, and a repository someone clones must not be able to widen the address guard
with a ``private_hosts`` entry.

A key the file does not know, or a ``RUNVIL_*`` variable runvil does not read, is refused with a
suggestion (``unknown key search.provder; did you mean search.provider?``): a typo in
``approval`` must not leave calls approved without a word.

**Where the settings come from.** Nothing here names a Pack's setting. Each setting is a
:class:`runvil.Setting` declaration: the faces' own (``envelope``, ``approval``, ``web``, the
``[mcp]`` table) are declared below, each Pack declares its own (the web Pack's ``[fetch]`` and
``[search]`` settings in :mod:`runvil.web._settings`, another installed Pack's as the
``settings`` of its Plugin), and this module builds the keys, the variables, the unknown-key and
unknown-variable checks, the resolution and ``runvil config`` from the declarations; the command
line builds its flags from them (:mod:`runvil._faces.cli`). A Pack's values reach it through the
Host (:attr:`Config.pack_settings`); the search provider and what it needs also build
:attr:`Config.search`. Only model roles and providers, and ``[packs.KEY]`` tables are the
user's own, and are resolved by the functions below. The reference is
``docs/configuration.md``.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import runvil.web._settings as web_settings
from runvil._settings import (
    Parser,
    Setting,
    as_bool,
    as_names,
    as_str,
    choice,
    positive_number,
    whole_number,
)
from runvil.prompts._modelspec import parse_model_spec
from runvil.web._search.config import SearchSettings

__all__ = [
    "APPROVAL_MODES",
    "SEARCH_PROVIDERS",
    "SETTINGS",
    "WEB_PACK",
    "Config",
    "ConfigError",
    "ModelProvider",
    "SearchSettings",
    "Setting",
    "declared_settings",
    "describe",
    "find_config_file",
    "load_config",
    "masked",
]

#: The search providers a configuration can name (declared by the web Pack).
SEARCH_PROVIDERS: tuple[str, ...] = web_settings.SEARCH_PROVIDERS
#: How network tool calls are approved: all at once, by asking at the terminal, or never.
APPROVAL_MODES = ("auto", "ask", "deny")
#: The name of runvil's own Pack, whose settings are declared in :mod:`runvil.web._settings`.
WEB_PACK = "runvil/web"


class ConfigError(Exception):
    """The configuration cannot be used; the message says which setting and where it came from."""


# -- value parsers: (value, where it came from) -> the typed value, or ConfigError ---------------


def _strict(parse: Parser) -> Parser:
    """``parse`` with its ``ValueError`` turned into a :class:`ConfigError` (same message)."""

    def run(value: Any, where: str) -> Any:
        try:
            return parse(value, where)
        except ValueError as err:
            raise ConfigError(str(err)) from None

    return run


_as_str: Callable[[Any, str], str] = _strict(as_str)


def _as_choice(value: Any, choices: tuple[str, ...], where: str) -> str:
    result: str = _strict(choice(choices))(value, where)
    return result


def _as_state(value: Any, where: str) -> str:
    """Where a fleet of ``runvil mcp --http`` replicas keeps what they share: a
    ``redis://[:PASSWORD@]HOST:PORT/DB`` (or ``rediss://``) URL. The message never quotes the
    value, which may hold a password."""
    from urllib.parse import urlsplit

    text = value.strip() if isinstance(value, str) else ""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        parts, port = None, None
    db = parts.path.strip("/") if parts is not None else ""
    if (
        parts is None or parts.scheme not in ("redis", "rediss") or not parts.hostname
        or port is None or not (db == "" or db.isdigit()) or parts.query or parts.fragment
    ):
        raise ConfigError(f"{where} must be a URL of the form redis://HOST:PORT/DB")
    return text


def _as_allowed_hosts(value: Any, where: str) -> tuple[str, ...]:
    from runvil._faces.mcp_http import check_allowed_hosts

    return check_allowed_hosts(as_names(value, where), where)


#: The tools ``runvil mcp`` can serve, by their MCP names.
MCP_TOOLS: tuple[str, ...] = ("web_fetch", "web_search")


def _as_tools(value: Any, where: str) -> tuple[str, ...]:
    """Tool names as a model calls them. The web tools are checked here; another installed
    Pack's tools (``notes_echo``) when ``runvil mcp`` loads the Packs (:mod:`._faces.mcp`)."""
    names = as_names(value, where)
    if not names:
        raise ConfigError(f"{where} must name at least one of {', '.join(MCP_TOOLS)}")
    for name in names:
        if name.startswith("web_") and name not in MCP_TOOLS:
            raise ConfigError(
                f"{where}: unknown tool {name!r} (known: {', '.join(MCP_TOOLS)})"
            )
    return tuple(dict.fromkeys(names))


def _as_packs(value: Any, where: str) -> tuple[str, ...]:
    """Pack names (``example/notes``), each served whole by ``runvil mcp``; whether each is
    installed is checked when the server loads them."""
    names = as_names(value, where)
    if not names:
        raise ConfigError(f"{where} must name at least one Pack")
    for name in names:
        if name.count("/") != 1 or not all(name.split("/")):
            raise ConfigError(f"{where}: {name!r} is not a Pack name (VENDOR/NAME)")
    return tuple(dict.fromkeys(names))


def shown_state(url: str) -> str:
    """A ``[mcp] state`` URL as ``runvil config`` shows it: a password masked."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    netloc = f"{user}:********@{parts.hostname}:{parts.port}"
    return parts._replace(netloc=netloc).geturl()


# -- the faces' own settings -------------------------------------------------------------------

#: The settings of every face. Their options differ between commands (``--no-web``,
#: ``--no-envelope``), so the commands declare these options by hand.
_FACE_SETTINGS: tuple[Setting, ...] = (
    Setting("envelope", ("RUNVIL_ENVELOPE",), as_bool, True, flag="envelope"),
    Setting("approval", ("RUNVIL_APPROVAL",), choice(APPROVAL_MODES), "auto", flag="approval"),
    Setting("web", ("RUNVIL_WEB",), as_bool, True, flag="web"),
)
_MCP_COMMANDS = ("mcp", "config")
#: ``runvil mcp``'s settings: which tools it serves, and (``--http``) the sessions it keeps
#: (docs/mcp.md, "Limits") and the state a fleet of replicas shares (docs/deploy.md).
_MCP_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "mcp.tools", ("RUNVIL_MCP_TOOLS",), _as_tools, None, flag="mcp_tools",
        option="--tools", metavar="NAMES", commands=_MCP_COMMANDS,
        help="The tools to serve, comma-separated: web_fetch, web_search, or any installed "
        "Pack's (default: both web tools).",
    ),
    Setting(
        "mcp.packs", ("RUNVIL_MCP_PACKS",), _as_packs, None, flag="mcp_packs",
        option="--packs", metavar="PACK", multiple=True, commands=_MCP_COMMANDS,
        help="Also serve every tool of this installed Pack (repeatable).",
    ),
    Setting(
        "mcp.max_sessions", ("RUNVIL_MCP_MAX_SESSIONS",), whole_number("sessions"), None,
        flag="mcp_max_sessions", option="--max-sessions", metavar="N", commands=_MCP_COMMANDS,
        help="HTTP sessions kept at once; past it the least recently active ends (default: 1024).",
    ),
    Setting(
        "mcp.sessions_per_peer", ("RUNVIL_MCP_SESSIONS_PER_PEER",), whole_number("sessions"),
        None, flag="mcp_sessions_per_peer", option="--sessions-per-peer", metavar="N",
        commands=_MCP_COMMANDS,
        help="HTTP sessions one client address keeps at once (default: 256).",
    ),
    Setting(
        "mcp.session_idle_timeout", ("RUNVIL_MCP_SESSION_IDLE_TIMEOUT",),
        positive_number("seconds"), None,
        flag="mcp_session_idle_timeout", option="--session-idle-timeout", metavar="SECONDS",
        commands=_MCP_COMMANDS,
        help="Seconds without a request before an HTTP session ends (default: 600).",
    ),
    Setting(
        "mcp.allowed_hosts", ("RUNVIL_MCP_ALLOWED_HOSTS",), _as_allowed_hosts, None,
        flag="mcp_allowed_hosts", option="--allow-host", metavar="NAME", multiple=True,
        commands=_MCP_COMMANDS,
        help="A Host name (or *.suffix) the HTTP server answers besides its address "
        "(repeatable; default: none).",
    ),
    Setting(
        "mcp.state", ("RUNVIL_MCP_STATE",), _as_state, None, flag="mcp_state",
        option="--state", metavar="redis://HOST:PORT/DB", commands=_MCP_COMMANDS,
        help="Keep sessions, pages, robots.txt rules, rate limits and the search memo in this "
        "Redis, shared by every replica (default: in this process).", show=shown_state,
    ),
)

#: The settings runvil itself declares (the faces' and the web Pack's), in the order they are
#: resolved (so the first bad one is reported), each on its own. The web Pack's search provider
#: and what it needs (``web_settings.SEARCH_SETTINGS``) depend on each other and are resolved
#: before all of these; another installed Pack's come after the web Pack's
#: (:func:`declared_settings`).
SETTINGS: tuple[Setting, ...] = (*_FACE_SETTINGS, *web_settings.SETTINGS, *_MCP_SETTINGS)
#: Every setting runvil itself declares: no other Pack may take a variable or flag of one.
_OWN_SETTINGS: tuple[Setting, ...] = (*web_settings.SEARCH_SETTINGS, *SETTINGS)

#: The tables (and top-level keys) runvil's own settings and tables use: another Pack's
#: settings live in a table named after its Pack id, never in one of these.
_RESERVED_TABLES = frozenset(
    {"envelope", "approval", "web", "fetch", "search", "mcp", "models", "providers", "packs"}
)


@dataclass(frozen=True)
class Declared:
    """Every setting in resolution order, and which Pack declared each (``None``: a face)."""

    settings: tuple[Setting, ...]
    owners: Mapping[str, str | None]


def declared_settings(*, installed: bool = True) -> Declared:
    """The web Pack's search provider and what it needs (resolved first: they were always
    resolved first, so their errors win), the faces' settings, the web Pack's others and, with
    ``installed``, those of every other Pack installed through the ``runvil.packs`` entry points
    (read now, so a test or a program that changes a declaration sees it)."""
    packs: dict[str, tuple[Setting, ...]] = {WEB_PACK: tuple(web_settings.SETTINGS)}
    if installed:
        packs.update(installed_pack_settings())
    owners: dict[str, str | None] = {s.key: None for s in (*_FACE_SETTINGS, *_MCP_SETTINGS)}
    owners.update((s.key, WEB_PACK) for s in web_settings.SEARCH_SETTINGS)
    ordered: list[Setting] = [*web_settings.SEARCH_SETTINGS, *_FACE_SETTINGS]
    for pack, settings in packs.items():
        for setting in settings:
            owners[setting.key] = pack
            ordered.append(setting)
    ordered += _MCP_SETTINGS
    return Declared(tuple(ordered), owners)


def installed_pack_settings() -> dict[str, tuple[Setting, ...]]:
    """The settings each installed Pack other than runvil's own declares: the ``settings`` of
    its Plugin (the callable its ``runvil.packs`` entry point names). A Plugin that cannot be
    loaded, or a declaration that does not fit (a key outside the Pack's own table, a variable
    or flag another setting has), is left out with a warning on the ``runvil.host`` logger:
    a Pack can add settings, never take over runvil's."""
    import logging

    from runvil._host.plugins import RESERVED_PREFIXES, installed_plugins

    logger = logging.getLogger("runvil.host")

    taken_env = {var for s in _OWN_SETTINGS for var in s.env} | set(_OTHER_ENV)
    taken_flags: set[str | None] = {s.flag for s in _OWN_SETTINGS} | _COMMAND_FLAGS
    taken_options: set[str | None] = {s.option for s in _OWN_SETTINGS}
    found: dict[str, tuple[Setting, ...]] = {}
    loaded: set[int] = set()
    for name, entry in installed_plugins().items():
        if name.startswith(RESERVED_PREFIXES):
            continue
        try:
            plugin = entry.load()
        except Exception as err:  # the Host reports it when the Pack is asked for
            logger.warning("cannot read the settings of Pack %s: %s", name, err)
            continue
        if id(plugin) in loaded:
            continue
        loaded.add(id(plugin))
        table = name.split("/", 1)[-1]
        accepted: list[Setting] = []
        for setting in getattr(plugin, "settings", ()) or ():
            problem = _misfit(setting, table, taken_env, taken_flags, taken_options)
            if problem is not None:
                logger.warning("ignoring a setting of Pack %s: %s", name, problem)
                continue
            taken_env.update(setting.env)
            taken_flags.add(setting.flag)
            taken_options.add(setting.option)
            accepted.append(setting)
        if accepted:
            found[name] = tuple(accepted)
    return found


def _misfit(
    setting: Any, table: str, env: set[str], flags: set[str | None], options: set[str | None]
) -> str | None:
    """Why a Pack's declaration cannot be served, or ``None``."""
    if not isinstance(setting, Setting):
        return f"{setting!r} is not a runvil.Setting"
    if setting.table != table or table in _RESERVED_TABLES:
        return f"{setting.key} is not in the Pack's own table [{table}]"
    if any(var in env for var in setting.env):
        return f"{setting.key}: its variable is another setting's"
    if setting.flag is not None and setting.flag in flags:
        return f"{setting.key}: its flag is another setting's"
    if setting.option is not None and setting.option in options:
        return f"{setting.key}: its option is another setting's"
    return None


#: Flags the commands fill themselves (their own arguments and options).
_COMMAND_FLAGS = frozenset({
    "models", "config_path", "as_json", "url", "query", "file", "http", "max_chars", "raw",
    "start_index", "count", "freshness", "country", "lang", "safesearch", "site",
    "exclude_site", "no_web",
})

#: Tables whose keys are the user's own: model roles, model providers, Pack configurations.
_TABLES = ("models", "providers", "packs")
_PROVIDER_KEYS = ("api", "base_url", "api_key_env")
_TABLE_SHAPES = {
    "models": 'a table of ROLE = "PROVIDER:MODEL"',
    "providers": "a table of [providers.NAME] tables",
    "packs": "a table of [packs.KEY] tables",
}
#: Variables runvil reads besides the settings' own; ``RUNVIL_MODEL_{ROLE}`` is a family.
_OTHER_ENV = ("RUNVIL_CONFIG", "RUNVIL_DEBUG")
_MODEL_ENV_PREFIX = "RUNVIL_MODEL_"


@dataclass(frozen=True)
class ModelProvider:
    """Where a model role's requests go: an API flavour, a base URL and the key's env var."""

    name: str
    api: str
    base_url: str
    api_key_env: str | None


#: Providers that need no ``[providers.NAME]`` table.
BUILTIN_MODEL_PROVIDERS: Mapping[str, ModelProvider] = {
    "openai": ModelProvider("openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": ModelProvider(
        "anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"
    ),
}


@dataclass(frozen=True)
class Config:
    """The effective configuration. ``sources`` says where each setting came from
    (``flag``, ``file:PATH``, ``env:VAR`` or ``default``), which ``runvil config`` prints.
    ``pack_settings`` holds each Pack's settings that were set (from a flag, the file or the
    environment) by Pack name then key, ``pack_defaults`` the declared defaults (other than
    ``None``) of those not set; ``packs`` maps a Pack's configuration key to its
    ``[packs.KEY]`` table. ``fetch``, ``fetch_defaults``, ``search_proxy`` and ``search_rate``
    read the web Pack's settings the way the faces wire them."""

    search: SearchSettings
    envelope: bool = True
    approval: str = "auto"
    web: bool = True
    models: Mapping[str, str] = field(default_factory=dict)
    providers: Mapping[str, ModelProvider] = field(default_factory=dict)
    packs: Mapping[str, Any] = field(default_factory=dict)
    mcp_tools: tuple[str, ...] | None = None
    """``[mcp] tools``: the tools ``runvil mcp`` serves (``None``: not set)."""
    mcp_packs: tuple[str, ...] | None = None
    """``[mcp] packs``: installed Packs whose every tool ``runvil mcp`` serves too."""
    mcp_max_sessions: int | None = None
    """``[mcp] max_sessions``: HTTP sessions kept at once (``None``: the default, 1024)."""
    mcp_sessions_per_peer: int | None = None
    """``[mcp] sessions_per_peer``: per client address (``None``: the default, 256)."""
    mcp_session_idle_timeout: float | None = None
    """``[mcp] session_idle_timeout``: seconds idle before a session ends (``None``: 600)."""
    mcp_allowed_hosts: tuple[str, ...] | None = None
    """``[mcp] allowed_hosts``: Host names the HTTP server answers besides its address."""
    mcp_state: str | None = field(default=None, repr=False)
    """``[mcp] state``: the Redis URL replicas share their state in (``None``: in-process)."""
    pack_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, repr=False)
    pack_defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    file: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    def setting(self, key: str) -> Any:
        """The effective value of the setting ``key`` (``fetch.robots``), set or default."""
        for table in (self.pack_settings, self.pack_defaults):
            for values in table.values():
                if key in values:
                    return values[key]
        attribute = key.replace(".", "_")
        if attribute in _FACE_FIELDS:
            return getattr(self, attribute)
        return None

    @property
    def fetch(self) -> Mapping[str, Any]:
        """The ``FetchPolicy`` fields the web Pack's settings set."""
        return web_settings.policy_fields(self.pack_settings.get(WEB_PACK, {}))

    @property
    def fetch_defaults(self) -> Mapping[str, Any]:
        """What the model-facing faces use for the policy fields not set (continuation and
        PDFs on, robots.txt off)."""
        return web_settings.policy_fields(self.pack_defaults.get(WEB_PACK, {}))

    @property
    def search_rate(self) -> float | None:
        """``[search] rate``: vendor requests per second at most, for the process or, with
        ``[mcp] state``, for the whole fleet (``None``: no limit of runvil's own)."""
        rate: float | None = self.pack_settings.get(WEB_PACK, {}).get("search.rate")
        return rate

    @property
    def search_proxy(self) -> str | None:
        """``[search] proxy`` (``None``: direct, or not set; then search takes ``[fetch]
        proxy``, as ``sources`` tells)."""
        proxy: str | None = self.pack_settings.get(WEB_PACK, {}).get("search.proxy")
        return proxy

    def model_provider(self, name: str) -> ModelProvider:
        """The provider a ``PROVIDER:MODEL`` spec names, configured or built in."""
        if name in self.providers:
            return self.providers[name]
        if name in BUILTIN_MODEL_PROVIDERS:
            return BUILTIN_MODEL_PROVIDERS[name]
        known = sorted(set(self.providers) | set(BUILTIN_MODEL_PROVIDERS))
        raise ConfigError(f"unknown model provider {name!r} (known: {', '.join(known)})")


#: The faces' settings, each a :class:`Config` field named after its key.
_FACE_FIELDS = frozenset(s.key.replace(".", "_") for s in (*_FACE_SETTINGS, *_MCP_SETTINGS))


def masked(secret: str | None) -> str | None:
    """A secret as ``runvil config`` shows it: whether it is set, never any of its characters."""
    return None if secret is None else "********"


def find_config_file(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The file layer: ``RUNVIL_CONFIG`` (a relative path taken from ``cwd``), else the user's
    config directory. Never ``./runvil.toml`` unless named (see the module docstring)."""
    env = os.environ if env is None else env
    named = env.get("RUNVIL_CONFIG", "").strip()
    if named:
        return (cwd or Path.cwd()) / Path(named).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    user = Path(base) / "runvil" / "runvil.toml"
    return user if user.is_file() else None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from None


# -- unknown keys and variables ------------------------------------------------------------------


def _unknown(what: str, name: str, candidates: Iterable[str], common: str = "") -> ConfigError:
    """``unknown key search.provder; did you mean search.provider?``, or the known names when
    none is close. ``common`` is the prefix every candidate shares (``search.``, ``RUNVIL_``);
    only what follows it is compared, so a shared prefix cannot make any name look close."""
    candidates = sorted(set(candidates))
    tails = {candidate[len(common):]: candidate for candidate in candidates}
    close = difflib.get_close_matches(name[len(common):], list(tails), n=1, cutoff=0.6)
    if close:
        return ConfigError(f"unknown {what} {name}; did you mean {tails[close[0]]}?")
    return ConfigError(f"unknown {what} {name}; known: {', '.join(candidates)}")


def _check_keys(data: Mapping[str, Any], path: Path, settings: Iterable[Setting]) -> None:
    """Refuse any key of the file that no setting reads, naming the closest known one."""
    leaves = {s.key for s in settings}
    tables = {key.rsplit(".", 1)[0] for key in leaves if "." in key} | set(_TABLES)

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for key, value in node.items():
            dotted = f"{prefix}{key}"
            if dotted in leaves:
                continue
            if dotted not in tables:
                level = prefix.count(".")
                siblings = {
                    name for name in leaves | tables
                    if name.count(".") == level and name.startswith(prefix)
                }
                err = _unknown("key", dotted, siblings, prefix)
                raise ConfigError(f"{path}: {err}") from None
            if not isinstance(value, Mapping):
                shape = _TABLE_SHAPES.get(dotted, "a table")
                raise ConfigError(f"{path}: {dotted} must be {shape}")
            if dotted == "providers":
                for name, entry in value.items():
                    if not isinstance(entry, Mapping):
                        raise ConfigError(f"{path}: providers.{name} must be a table")
                    for sub in entry:
                        if sub not in _PROVIDER_KEYS:
                            err = _unknown(
                                "key", f"providers.{name}.{sub}",
                                (f"providers.{name}.{k}" for k in _PROVIDER_KEYS),
                                f"providers.{name}.",
                            )
                            raise ConfigError(f"{path}: {err}") from None
            elif dotted not in _TABLES:
                walk(value, dotted + ".")

    walk(data, "")


def _check_env(env: Mapping[str, str], settings: Iterable[Setting]) -> None:
    """Refuse a ``RUNVIL_*`` variable (set, not blank) that runvil does not read."""
    known = {var for s in settings for var in (*s.env, *(v for v, _ in s.implied_by))}
    known |= set(_OTHER_ENV)
    for var, value in env.items():
        if not var.startswith("RUNVIL_") or var in known or not value.strip():
            continue
        if var.startswith(_MODEL_ENV_PREFIX) and len(var) > len(_MODEL_ENV_PREFIX):
            continue
        candidates = {v for v in known if v.startswith("RUNVIL_")}
        candidates.add(f"{_MODEL_ENV_PREFIX}{{ROLE}}")
        raise _unknown("environment variable", var, candidates, "RUNVIL_")


# -- resolving layers ----------------------------------------------------------------------------


class _Layers:
    """Looks one setting up in flag, environment and file order and records where it was
    found."""

    def __init__(
        self, flags: Mapping[str, Any], data: Mapping[str, Any], path: Path | None,
        env: Mapping[str, str],
    ) -> None:
        self.flags = flags
        self.data = data
        self.path = path
        self.env = env
        self.sources: dict[str, str] = {}

    def file_value(self, dotted: str) -> Any:
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node

    def get(
        self, flag: str | None, dotted: str, env_vars: tuple[str, ...]
    ) -> tuple[Any, str] | None:
        """``(value, source)`` of the first layer that sets the setting, or None. A repeatable
        flag given no times (``()``) is not given."""
        if flag is not None and self.flags.get(flag) not in (None, ()):
            return self.flags[flag], "flag"
        for var in env_vars:
            if self.env.get(var, "").strip():
                return self.env[var].strip(), f"env:{var}"
        value = self.file_value(dotted)
        if value is not None:
            return value, f"file:{self.path}"
        return None

    def where(self, source: str, dotted: str) -> str:
        if source.startswith("file:"):
            return f"{self.path}: {dotted}"
        if source.startswith("env:"):
            return source[4:]
        return f"--{dotted.replace('_', '-')}"

    def setting(self, setting: Setting, values: Mapping[str, Any]) -> Any:
        """``setting``'s value (recording its source), given the values of the settings resolved
        before it (by key), which a dependent setting's ``needs`` reads."""
        env, missing = setting.env, None
        if setting.needs is not None:
            needed = setting.needs(values)
            if needed is None:  # not read here: no source, its default
                return setting.default
            env, missing = needed.env, needed.missing
        got = self.get(setting.flag, setting.key, env)
        if got is None:
            for var, implied in setting.implied_by:
                if self.env.get(var, "").strip():
                    self._record(setting, f"env:{var}")
                    return implied
            if missing is not None:
                raise ConfigError(missing)
            if setting.needs is None:
                self._record(setting, "default")
            return setting.default
        value, where = got[0], self.where(got[1], setting.key)
        if got[1] == "flag" and setting.option is not None:
            if setting.multiple and isinstance(value, list | tuple):
                value = " ".join(str(part) for part in value)
            where = setting.option.split("/", 1)[0]
        self._record(setting, got[1])
        return _strict(setting.parse)(value, where)

    def _record(self, setting: Setting, source: str) -> None:
        if setting.listed:
            self.sources[setting.key] = source


def _providers(layers: _Layers) -> dict[str, ModelProvider]:
    table = layers.file_value("providers")
    if table is None:
        return {}
    out: dict[str, ModelProvider] = {}
    for name, entry in table.items():
        where = f"{layers.path}: providers.{name}"
        api = _as_choice(entry.get("api", "openai"), ("openai", "anthropic"), f"{where}.api")
        if "base_url" not in entry:
            raise ConfigError(f"{where}.base_url is required")
        base_url = _as_str(entry["base_url"], f"{where}.base_url")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.base_url must be an http:// or https:// URL")
        key_env = entry.get("api_key_env")
        if key_env is not None:
            key_env = _as_str(key_env, f"{where}.api_key_env")
        out[str(name)] = ModelProvider(str(name), api, base_url, key_env)
    return out


def _model_spec(spec: Any, where: str) -> str:
    """A role's ``PROVIDER:MODEL``, checked (and trimmed) by the one parser the model clients
    use too."""
    text = _as_str(spec, where)
    try:
        provider, model = parse_model_spec(text)
    except ValueError:
        raise ConfigError(f"{where} must read PROVIDER:MODEL, not {text!r}") from None
    return f"{provider}:{model}"


def _models(layers: _Layers, flag_models: Mapping[str, str]) -> dict[str, str]:
    """Each role from the file, then the environment, then a flag: the later layer wins."""
    roles: dict[str, str] = {}
    table = layers.file_value("models")
    if table is not None:
        for role, spec in table.items():
            roles[str(role)] = _model_spec(spec, f"{layers.path}: models.{role}")
            layers.sources[f"models.{role}"] = f"file:{layers.path}"
    for var, value in layers.env.items():
        if var.startswith(_MODEL_ENV_PREFIX) and value and len(var) > len(_MODEL_ENV_PREFIX):
            role = var[len(_MODEL_ENV_PREFIX):].lower()
            roles[role] = _model_spec(value, var)
            layers.sources[f"models.{role}"] = f"env:{var}"
    for role, spec in flag_models.items():
        roles[role] = _model_spec(spec, f"--model {role}")
        layers.sources[f"models.{role}"] = "flag"
    return roles


def load_config(
    flags: Mapping[str, Any] | None = None,
    *,
    config_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Config:
    """Resolve the effective configuration.

    ``flags`` holds command-line values (``None`` means "not given"): ``models`` (role ->
    ``PROVIDER:MODEL``) and each declared setting's ``flag`` (:func:`declared_settings`;
    ``search_provider``, ``search_api_key``, ``search_url``, ``search_allow_private`` among
    them).
    Raises :class:`ConfigError` with a message naming the setting and its source.
    """
    env = os.environ if env is None else env
    flags = dict(flags or {})
    declared = declared_settings()
    _check_env(env, declared.settings)
    path = config_path if config_path is not None else find_config_file(cwd, env)
    data = _read_file(path) if path is not None else {}
    if path is not None:
        _check_keys(data, path, declared.settings)
    layers = _Layers(flags, data, path, env)

    resolved: dict[str, Any] = {}
    values: dict[str, Any] = {}
    pack_settings: dict[str, dict[str, Any]] = {}
    pack_defaults: dict[str, dict[str, Any]] = {}
    for setting in declared.settings:
        value = resolved[setting.key] = layers.setting(setting, resolved)
        owner = declared.owners[setting.key]
        if owner is None:
            values[setting.key.replace(".", "_")] = value
        elif not setting.listed:
            continue
        elif layers.sources.get(setting.key, "default") != "default":
            pack_settings.setdefault(owner, {})[setting.key] = value
        elif setting.default is not None:
            pack_defaults.setdefault(owner, {})[setting.key] = setting.default
    try:
        web_settings.check_env_proxies(pack_settings.get(WEB_PACK, {}), env)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    providers = _providers(layers)
    models = _models(layers, flags.get("models") or {})
    packs = dict(layers.file_value("packs") or {})
    config = Config(
        search=web_settings.search_settings(resolved), models=models, providers=providers,
        packs=packs, pack_settings=pack_settings, pack_defaults=pack_defaults, file=path,
        sources=dict(layers.sources), **values,
    )
    for role, spec in models.items():
        try:
            config.model_provider(parse_model_spec(spec)[0])
        except ConfigError as err:
            raise ConfigError(f"models.{role}: {err}") from None
    return config


def describe(config: Config) -> dict[str, Any]:
    """The effective configuration as plain data with every secret masked (``runvil config``).

    A declared setting is shown when it was set or has a default; a table (``[fetch]``,
    ``[mcp]``, another Pack's) when it shows any, in the order the settings are declared."""
    tables: dict[str, dict[str, Any]] = {"search": {}}
    for setting in declared_settings().settings:
        if not setting.table or not setting.listed:
            continue
        value = config.setting(setting.key)
        if config.sources.get(setting.key, "default") == "default" and setting.default is None:
            continue
        if setting.show is not None:
            value = setting.show(value)
            if value is None:
                continue
        elif isinstance(value, tuple):
            value = list(value)
        tables.setdefault(setting.table, {})[setting.name] = value
    providers = {
        name: {"api": p.api, "base_url": p.base_url, "api_key_env": p.api_key_env}
        for name, p in config.providers.items()
    }
    described: dict[str, Any] = {
        "file": str(config.file) if config.file is not None else None,
        "web": config.web,
        "envelope": config.envelope,
        "approval": config.approval,
        "search": tables.pop("search"),
        "models": dict(config.models),
        "providers": providers,
        "sources": dict(config.sources),
    }
    described.update(tables)
    if config.packs:
        described["packs"] = dict(config.packs)
    return described
