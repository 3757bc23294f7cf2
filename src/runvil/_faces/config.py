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

**Adding a setting** is one row in :data:`SETTINGS`: its ``runvil.toml`` key, its environment
variables, its flag (the CLI option's destination, with ``option="--name"`` the option itself,
added to every command, or to the ``commands`` the row names) and its parser. A row with
``policy=FIELD`` sets that :class:`~runvil.web.FetchPolicy` field (collected in
:attr:`Config.fetch` and applied by :func:`runvil._faces.wiring.wire`); any other row also needs
a :class:`Config` field named after its key. The unknown-key check and ``runvil config``
follow the table. The reference is ``docs/configuration.md``.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runvil.prompts._modelspec import parse_model_spec
from runvil.web._search.config import (
    CHOICE_ENV,
    DETECTION_ORDER,
    KEY_ENV,
    PRIVATE_ENV,
    PROVIDER_NAMES,
    URL_ENV,
    SearchSettings,
)

__all__ = [
    "APPROVAL_MODES",
    "SEARCH_PROVIDERS",
    "SETTINGS",
    "Config",
    "ConfigError",
    "ModelProvider",
    "SearchSettings",
    "Setting",
    "describe",
    "find_config_file",
    "load_config",
    "masked",
]

#: The search providers a configuration can name (``none`` offers no search at all).
SEARCH_PROVIDERS: tuple[str, ...] = (
    "duckduckgo", *(name for name in PROVIDER_NAMES if name != "duckduckgo"), "none",
)
#: How network tool calls are approved: all at once, by asking at the terminal, or never.
APPROVAL_MODES = ("auto", "ask", "deny")

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class ConfigError(Exception):
    """The configuration cannot be used; the message says which setting and where it came from."""


# -- value parsers: (value, where it came from) -> the typed value, or ConfigError ---------------


def _as_bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE:
        return True
    if isinstance(value, str) and value.strip().lower() in _FALSE:
        return False
    raise ConfigError(f"{where} must be true or false, not {value!r}")


def _as_choice(value: Any, choices: tuple[str, ...], where: str) -> str:
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    raise ConfigError(f"{where} must be one of {', '.join(choices)}, not {value!r}")


def _choice(choices: tuple[str, ...]) -> Callable[[Any, str], str]:
    def parse(value: Any, where: str) -> str:
        return _as_choice(value, choices, where)

    return parse


def _as_pages(value: Any, where: str) -> int:
    """A whole number of pages, 1 or more (an integer in the file, digits in a variable)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ConfigError(f"{where} must be a whole number of pages, 1 or more, not {value!r}")


def _as_sessions(value: Any, where: str) -> int:
    """A whole number of sessions, 1 or more (an integer in the file, digits in a variable)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise ConfigError(f"{where} must be a whole number of sessions, 1 or more, not {value!r}")


def _positive_number(unit: str) -> Callable[[Any, str], float]:
    """A parser for a number above 0 (a number in the file, a decimal number in a variable),
    whose error names ``unit`` (``"seconds"``, ``"searches per second"``)."""

    def parse(value: Any, where: str) -> float:
        number: Any = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if (
            isinstance(number, int | float) and not isinstance(number, bool)
            and 0 < number < float("inf")
        ):
            return float(number)
        raise ConfigError(f"{where} must be a number of {unit} above 0, not {value!r}")

    return parse


_as_idle_seconds = _positive_number("seconds")
_as_rate = _positive_number("searches per second")


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

    try:
        return check_allowed_hosts(_as_names(value, where), where)
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _as_str(value: Any, where: str) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ConfigError(f"{where} must be a non-empty string, not {value!r}")


# -- the operator's network and tools: parsers -------------------------------------------------


def _as_names(value: Any, where: str) -> tuple[str, ...]:
    """A list of names: a TOML array of strings, or (from a variable or a flag) one string of
    names separated by commas or spaces."""
    if isinstance(value, str):
        return tuple(part for part in value.replace(",", " ").split() if part)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise ConfigError(f"{where} must be a list of names, not {value!r}")


def _as_private_hosts(value: Any, where: str) -> tuple[str, ...]:
    from runvil.web._fetch.settings import check_private_hosts

    try:
        return check_private_hosts(_as_names(value, where), where)
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _domains(value: Any, where: str) -> tuple[str, ...]:
    from runvil.web._fetch.policy import domain_entry

    try:
        return tuple(domain_entry(entry, where) for entry in _as_names(value, where))
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _as_user_agent(value: Any, where: str) -> str:
    from runvil.web._fetch.policy import user_agent_value

    try:
        return user_agent_value(_as_str(value, where), where)
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _as_proxy(value: Any, where: str) -> str | None:
    from runvil.web._fetch.settings import check_proxy

    try:
        return check_proxy(value)
    except ValueError as err:  # never quotes the value: it may hold a password
        raise ConfigError(f"{where}: {err}") from None


#: The tools ``runvil mcp`` can serve, by their MCP names.
MCP_TOOLS: tuple[str, ...] = ("web_fetch", "web_search")


def _as_tools(value: Any, where: str) -> tuple[str, ...]:
    """Tool names as a model calls them. The web tools are checked here; another installed
    Pack's tools (``notes_echo``) when ``runvil mcp`` loads the Packs (:mod:`._faces.mcp`)."""
    names = _as_names(value, where)
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
    names = _as_names(value, where)
    if not names:
        raise ConfigError(f"{where} must name at least one Pack")
    for name in names:
        if name.count("/") != 1 or not all(name.split("/")):
            raise ConfigError(f"{where}: {name!r} is not a Pack name (VENDOR/NAME)")
    return tuple(dict.fromkeys(names))


def _as_ca_bundle(value: Any, where: str) -> str:
    """The path of a readable PEM file of CA certificates (read now, so a bad one stops the
    command before anything runs)."""
    from runvil.web._fetch.policy import FetchPolicy

    try:
        path = FetchPolicy(ca_bundle=value).ca_bundle  # the policy reads and checks the file
    except ValueError as err:
        raise ConfigError(f"{where}: {err}") from None
    assert path is not None
    return path


# -- the settings table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One plain setting: where it is read from and how its value is checked.

    ``key`` is the dotted ``runvil.toml`` key, ``env`` the variables that set it (the first that
    is set and not blank wins), ``flag`` the key of the flags mapping the CLI fills (``None``:
    no flag), ``parse(value, where)`` checks a value and raises :class:`ConfigError` naming
    ``where``. ``policy`` names the ``FetchPolicy`` field the setting sets, if it is one; such a
    setting's key is ``fetch.{field}``, so ``runvil config`` shows it under ``[fetch]``.
    """

    key: str
    env: tuple[str, ...]
    parse: Callable[[Any, str], Any]
    default: Any
    flag: str | None = None
    policy: str | None = None
    option: str | None = None
    """The command-line option that fills ``flag`` (``--fetch-timeout``), added to every command
    that reads the configuration. The first rows predate this and declare their options by
    hand, because their options differ between commands (``--no-web``, ``--no-envelope``)."""
    metavar: str = "VALUE"
    help: str = ""
    commands: tuple[str, ...] | None = None
    """The commands whose command line has ``option`` (``None``: every command that reads the
    configuration)."""
    multiple: bool = False
    """The option may be repeated (``--private-host a --private-host b``), each value a name or
    names separated by commas; the values together are the list."""


#: Every plain setting, in the order they are resolved (so the first bad one is reported).
#: The search provider and its key/URL, model roles, model providers and Pack configuration
#: depend on each other and are resolved by the functions below; their keys are in
#: ``_SEARCH_KEYS`` and ``_TABLES``.
SETTINGS: tuple[Setting, ...] = (
    Setting("envelope", ("RUNVIL_ENVELOPE",), _as_bool, True, flag="envelope"),
    Setting("approval", ("RUNVIL_APPROVAL",), _choice(APPROVAL_MODES), "auto", flag="approval"),
    Setting("web", ("RUNVIL_WEB",), _as_bool, True, flag="web"),
    # -- the operator's network and tools (docs/company-network.md) --------------------------
    Setting(
        "fetch.user_agent", ("RUNVIL_FETCH_USER_AGENT",), _as_user_agent, None,
        flag="user_agent", option="--user-agent", policy="user_agent", metavar="TEXT",
        help="The User-Agent header every fetch sends (default: harness-webfetch/0.0).",
        commands=("fetch", "run", "mcp", "config"),
    ),
    Setting(
        "fetch.private_hosts", ("RUNVIL_FETCH_PRIVATE_HOSTS",), _as_private_hosts, None,
        policy="private_hosts", flag="private_hosts", option="--private-host",
        metavar="HOST", multiple=True, commands=("fetch", "run", "mcp", "config"),
        help="A host of your own network to fetch (repeatable; replaces fetch.private_hosts).",
    ),
    Setting(
        "fetch.allowed_domains", ("RUNVIL_FETCH_ALLOWED_DOMAINS",), _domains, None,
        policy="allowed_domains", flag="allowed_domains", option="--allow-domain",
        metavar="DOMAIN", multiple=True, commands=("fetch", "run", "mcp", "config"),
        help="Fetch only this domain and those named so (repeatable).",
    ),
    Setting(
        "fetch.blocked_domains", ("RUNVIL_FETCH_BLOCKED_DOMAINS",), _domains, None,
        policy="blocked_domains", flag="blocked_domains", option="--block-domain",
        metavar="DOMAIN", multiple=True, commands=("fetch", "run", "mcp", "config"),
        help="Never fetch this domain (repeatable).",
    ),
    Setting(
        "fetch.proxy", ("RUNVIL_FETCH_PROXY",), _as_proxy, None, policy="proxy",
    ),
    Setting("search.proxy", ("RUNVIL_SEARCH_PROXY",), _as_proxy, None),
    Setting("search.rate", ("RUNVIL_SEARCH_RATE",), _as_rate, None),
    Setting(
        "fetch.ca_bundle", ("RUNVIL_FETCH_CA_BUNDLE",), _as_ca_bundle, None,
        flag="ca_bundle", option="--ca-bundle", policy="ca_bundle", metavar="FILE",
        help="A PEM file of your organisation's CA certificates, trusted besides the public "
        "roots.",
    ),
    Setting(
        "mcp.tools", ("RUNVIL_MCP_TOOLS",), _as_tools, None, flag="mcp_tools",
        option="--tools", metavar="NAMES", commands=("mcp", "config"),
        help="The tools to serve, comma-separated: web_fetch, web_search, or any installed "
        "Pack's (default: both web tools).",
    ),
    Setting(
        "mcp.packs", ("RUNVIL_MCP_PACKS",), _as_packs, None, flag="mcp_packs",
        option="--packs", metavar="PACK", multiple=True, commands=("mcp", "config"),
        help="Also serve every tool of this installed Pack (repeatable).",
    ),
    # -- runvil mcp --http: the sessions it keeps (docs/mcp.md, "Limits")
    Setting(
        "mcp.max_sessions", ("RUNVIL_MCP_MAX_SESSIONS",), _as_sessions, None,
        flag="mcp_max_sessions", option="--max-sessions", metavar="N", commands=("mcp", "config"),
        help="HTTP sessions kept at once; past it the least recently active ends (default: 1024).",
    ),
    Setting(
        "mcp.sessions_per_peer", ("RUNVIL_MCP_SESSIONS_PER_PEER",), _as_sessions, None,
        flag="mcp_sessions_per_peer", option="--sessions-per-peer", metavar="N",
        commands=("mcp", "config"),
        help="HTTP sessions one client address keeps at once (default: 256).",
    ),
    Setting(
        "mcp.session_idle_timeout", ("RUNVIL_MCP_SESSION_IDLE_TIMEOUT",), _as_idle_seconds, None,
        flag="mcp_session_idle_timeout", option="--session-idle-timeout", metavar="SECONDS",
        commands=("mcp", "config"),
        help="Seconds without a request before an HTTP session ends (default: 600).",
    ),
    Setting(
        "mcp.allowed_hosts", ("RUNVIL_MCP_ALLOWED_HOSTS",), _as_allowed_hosts, None,
        flag="mcp_allowed_hosts", option="--allow-host", metavar="NAME", multiple=True,
        commands=("mcp", "config"),
        help="A Host name (or *.suffix) the HTTP server answers besides its address "
        "(repeatable; default: none).",
    ),
    # -- runvil mcp --http as one of a fleet of replicas (docs/deploy.md)
    Setting(
        "mcp.state", ("RUNVIL_MCP_STATE",), _as_state, None, flag="mcp_state",
        option="--state", metavar="redis://HOST:PORT/DB", commands=("mcp", "config"),
        help="Keep sessions, pages, robots.txt rules, rate limits and the search memo in this "
        "Redis, shared by every replica (default: in this process).",
    ),
    # -- reading more (docs/fetch.md, "Reading more"). A policy row's non-None default is what
    # the model-facing faces (runvil fetch, runvil mcp) use when it is not set; runvil run keeps
    # the seeds' policy for prompt files unless the setting is given (docs/configuration.md).
    Setting("fetch.continuation", ("RUNVIL_FETCH_CONTINUATION",), _as_bool, True,
            flag="fetch_continuation", policy="continuation",
            option="--continuation/--no-continuation",
            help="Offer start_index to read long pages on (default: on; runvil run: off)."),
    Setting("fetch.pdf", ("RUNVIL_FETCH_PDF",), _as_bool, True,
            flag="fetch_pdf", policy="pdf", option="--pdf/--no-pdf",
            help="Return PDFs as text (default: on; runvil run: off)."),
    Setting("fetch.pdf_max_pages", ("RUNVIL_FETCH_PDF_MAX_PAGES",), _as_pages, None,
            policy="pdf_max_pages"),
    Setting("fetch.robots", ("RUNVIL_FETCH_ROBOTS",), _as_bool, False,
            flag="fetch_robots", policy="robots", option="--robots/--no-robots",
            help="Honour each site's robots.txt (default: off)."),
    # -- pages that JavaScript builds (docs/fetch.md). No default here: runvil fetch and runvil
    # mcp turn "auto" on when a usable browser is found (wiring.wire), runvil run keeps "never".
    Setting("fetch.browser", ("RUNVIL_FETCH_BROWSER",), _choice(("never", "auto", "always")),
            None, flag="fetch_browser", policy="browser", option="--browser",
            metavar="never|auto|always", commands=("fetch", "run", "mcp", "config"),
            help="Render pages that JavaScript builds in a headless browser with no network of "
            "its own (default: auto when one is found; runvil run: never)."),
    Setting("fetch.browser_path", ("RUNVIL_FETCH_BROWSER_PATH",), _as_str, None,
            policy="browser_path"),
)

_SEARCH_KEYS = (
    "search.provider", "search.api_key", "search.api_key_env", "search.url", "search.allow_private",
)
#: Tables whose keys are the user's own: model roles, model providers, Pack configurations.
_TABLES = ("models", "providers", "packs")
_PROVIDER_KEYS = ("api", "base_url", "api_key_env")
_TABLE_SHAPES = {
    "models": 'a table of ROLE = "PROVIDER:MODEL"',
    "providers": "a table of [providers.NAME] tables",
    "packs": "a table of [packs.KEY] tables",
}
#: Variables runvil reads besides the settings' own; ``RUNVIL_MODEL_{ROLE}`` is a family.
_OTHER_ENV = ("RUNVIL_CONFIG", "RUNVIL_DEBUG", CHOICE_ENV, PRIVATE_ENV)
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
    ``fetch`` holds the ``FetchPolicy`` fields settings set (from a flag, the file or the
    environment), ``fetch_defaults`` what the model-facing faces use for the policy rows not set
    (continuation and PDFs on); ``packs`` maps a Pack's configuration key to its ``[packs.KEY]``
    table."""

    search: SearchSettings
    envelope: bool = True
    approval: str = "auto"
    web: bool = True
    models: Mapping[str, str] = field(default_factory=dict)
    providers: Mapping[str, ModelProvider] = field(default_factory=dict)
    packs: Mapping[str, Any] = field(default_factory=dict)
    fetch: Mapping[str, Any] = field(default_factory=dict)
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
    search_rate: float | None = None
    """``[search] rate``: vendor requests per second at most, for the process or, with
    ``[mcp] state``, for the whole fleet (``None``: no limit of runvil's own)."""
    search_proxy: str | None = None
    """``[search] proxy`` (``None``: direct, or not set; then search takes ``[fetch] proxy``,
    as ``sources`` tells)."""
    fetch_defaults: Mapping[str, Any] = field(default_factory=dict)
    file: Path | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    def model_provider(self, name: str) -> ModelProvider:
        """The provider a ``PROVIDER:MODEL`` spec names, configured or built in."""
        if name in self.providers:
            return self.providers[name]
        if name in BUILTIN_MODEL_PROVIDERS:
            return BUILTIN_MODEL_PROVIDERS[name]
        known = sorted(set(self.providers) | set(BUILTIN_MODEL_PROVIDERS))
        raise ConfigError(f"unknown model provider {name!r} (known: {', '.join(known)})")


def _shown_proxy(value: str | None) -> str:
    """A proxy setting as ``runvil config`` shows it: credentials masked, ``none`` for direct."""
    from runvil.web._fetch.settings import shown_proxy

    return shown_proxy(value) or "none"


def shown_state(url: str) -> str:
    """A ``[mcp] state`` URL as ``runvil config`` shows it: a password masked."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    netloc = f"{user}:********@{parts.hostname}:{parts.port}"
    return parts._replace(netloc=netloc).geturl()


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


def _check_keys(data: Mapping[str, Any], path: Path) -> None:
    """Refuse any key of the file that no setting reads, naming the closest known one."""
    leaves = {s.key for s in SETTINGS} | set(_SEARCH_KEYS)
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


def _check_env(env: Mapping[str, str]) -> None:
    """Refuse a ``RUNVIL_*`` variable (set, not blank) that runvil does not read."""
    known = {var for s in SETTINGS for var in s.env} | set(_OTHER_ENV)
    known |= set(KEY_ENV.values()) | set(URL_ENV.values())
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

    def setting(self, setting: Setting) -> Any:
        got = self.get(setting.flag, setting.key, setting.env)
        if got is None:
            self.sources[setting.key] = "default"
            return setting.default
        self.sources[setting.key] = got[1]
        if got[1] == "flag" and setting.option is not None:
            value = got[0]
            if setting.multiple and isinstance(value, list | tuple):
                value = " ".join(str(part) for part in value)
            return setting.parse(value, setting.option.split("/", 1)[0])
        return setting.parse(got[0], self.where(got[1], setting.key))


def _search(layers: _Layers) -> SearchSettings:
    got = layers.get("search_provider", "search.provider", (CHOICE_ENV,))
    if got is None:
        provider, source = "duckduckgo", "default"
        for name, var in DETECTION_ORDER:
            if layers.env.get(var, "").strip():
                provider, source = name, f"env:{var}"
                break
    else:
        provider = _as_choice(got[0], SEARCH_PROVIDERS, layers.where(got[1], "search.provider"))
        source = got[1]
    layers.sources["search.provider"] = source

    api_key: str | None = None
    if provider in KEY_ENV:
        key_env = layers.file_value("search.api_key_env")
        named: tuple[str, ...] = (key_env,) if isinstance(key_env, str) and key_env else ()
        env_vars = (*named, KEY_ENV[provider])
        got = layers.get("search_api_key", "search.api_key", env_vars)
        if got is None:
            raise ConfigError(f"search provider {provider} needs an API key: set {env_vars[0]}")
        api_key = _as_str(got[0], layers.where(got[1], "search.api_key"))
        layers.sources["search.api_key"] = got[1]

    url: str | None = None
    if provider in URL_ENV:
        got = layers.get("search_url", "search.url", (URL_ENV[provider],))
        if got is None:
            raise ConfigError(
                f"search provider {provider} needs a URL: set search.url in runvil.toml "
                f"or {URL_ENV[provider]}"
            )
        url = _as_str(got[0], layers.where(got[1], "search.url"))
        layers.sources["search.url"] = got[1]

    allow_private = False
    got = layers.get("search_allow_private", "search.allow_private", (PRIVATE_ENV,))
    if got is not None:
        allow_private = _as_bool(got[0], layers.where(got[1], "search.allow_private"))
        layers.sources["search.allow_private"] = got[1]
    return SearchSettings(provider, api_key=api_key, url=url, allow_private=allow_private)


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

    ``flags`` holds command-line values (``None`` means "not given"): ``search_provider``,
    ``search_api_key``, ``search_url``, ``search_allow_private``, ``models`` (role ->
    ``PROVIDER:MODEL``) and each :data:`SETTINGS` row's ``flag``. Raises :class:`ConfigError`
    with a message naming the setting and its source.
    """
    env = os.environ if env is None else env
    flags = dict(flags or {})
    _check_env(env)
    path = config_path if config_path is not None else find_config_file(cwd, env)
    data = _read_file(path) if path is not None else {}
    if path is not None:
        _check_keys(data, path)
    layers = _Layers(flags, data, path, env)

    search = _search(layers)
    values: dict[str, Any] = {}
    fetch: dict[str, Any] = {}
    fetch_defaults: dict[str, Any] = {}
    for setting in SETTINGS:
        value = layers.setting(setting)
        if setting.policy is not None:
            if layers.sources[setting.key] != "default":
                fetch[setting.policy] = value
            elif setting.default is not None:
                fetch_defaults[setting.policy] = setting.default
        else:
            values[setting.key.replace(".", "_")] = value
    _check_env_proxies(fetch.get("proxy"), values.get("search_proxy"), env)
    providers = _providers(layers)
    models = _models(layers, flags.get("models") or {})
    packs = dict(layers.file_value("packs") or {})
    config = Config(
        search=search, models=models, providers=providers, packs=packs, fetch=fetch,
        fetch_defaults=fetch_defaults, file=path, sources=dict(layers.sources), **values,
    )
    for role, spec in models.items():
        try:
            config.model_provider(parse_model_spec(spec)[0])
        except ConfigError as err:
            raise ConfigError(f"models.{role}: {err}") from None
    return config


def _check_env_proxies(
    fetch_proxy: str | None, search_proxy: str | None, env: Mapping[str, str]
) -> None:
    """A proxy setting of ``"env"`` reads ``HTTPS_PROXY`` and friends: check them now, so a bad
    one stops the command before anything runs (naming the variable, never its value)."""
    if "env" not in (fetch_proxy, search_proxy):
        return
    from runvil.web._fetch.settings import check_env_proxies

    try:
        check_env_proxies(env)
    except ValueError as err:
        raise ConfigError(f"{err} (read because a proxy setting is \"env\")") from None


def describe(config: Config) -> dict[str, Any]:
    """The effective configuration as plain data with every secret masked (``runvil config``)."""
    search: dict[str, Any] = {"provider": config.search.provider}
    if config.search.api_key is not None:
        search["api_key"] = masked(config.search.api_key)
    if config.search.url is not None:
        search["url"] = config.search.url
    if config.search.allow_private:
        search["allow_private"] = True
    if config.sources.get("search.proxy", "default") != "default":
        search["proxy"] = _shown_proxy(config.search_proxy)
    if config.search_rate is not None:
        search["rate"] = config.search_rate
    providers = {
        name: {"api": p.api, "base_url": p.base_url, "api_key_env": p.api_key_env}
        for name, p in config.providers.items()
    }
    described: dict[str, Any] = {
        "file": str(config.file) if config.file is not None else None,
        "web": config.web,
        "envelope": config.envelope,
        "approval": config.approval,
        "search": search,
        "models": dict(config.models),
        "providers": providers,
        "sources": dict(config.sources),
    }
    fetch = {**config.fetch_defaults, **config.fetch}
    if fetch:  # in the table's order, each with its source in "sources"
        order = [s.policy for s in SETTINGS if s.policy is not None and s.policy in fetch]
        described["fetch"] = {
            name: _shown_proxy(fetch[name]) if name == "proxy"
            else list(fetch[name]) if isinstance(fetch[name], tuple) else fetch[name]
            for name in order
        }
    mcp: dict[str, Any] = {}
    if config.mcp_tools is not None:
        mcp["tools"] = list(config.mcp_tools)
    if config.mcp_packs is not None:
        mcp["packs"] = list(config.mcp_packs)
    for key in ("max_sessions", "sessions_per_peer", "session_idle_timeout"):
        value = getattr(config, f"mcp_{key}")
        if value is not None:
            mcp[key] = value
    if config.mcp_allowed_hosts is not None:
        mcp["allowed_hosts"] = list(config.mcp_allowed_hosts)
    if config.mcp_state is not None:
        mcp["state"] = shown_state(config.mcp_state)
    if mcp:
        described["mcp"] = mcp
    if config.packs:
        described["packs"] = dict(config.packs)
    return described
