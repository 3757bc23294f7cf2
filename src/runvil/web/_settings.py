"""The web Pack's settings: the ``[fetch]`` keys (each a :class:`~runvil.web.FetchPolicy` field
of the same name) and the ``[search]`` keys, declared once.

The faces build every ``runvil.toml`` key, variable, flag and ``runvil config`` line of these
settings from the declarations (:mod:`runvil._faces.config`); the Pack reads the values it is
handed (:func:`policy_fields`, :func:`search_settings`). The search provider and what it needs
(:data:`SEARCH_SETTINGS`) depend on each other: the provider may be guessed from the variable
of a key, and which key or URL it reads, from which variable, depends on the provider; their
declarations say so (``implied_by``, ``needs``) and the faces resolve them like any other.

This module is read by every command line, ``runvil --help`` included, so it imports nothing
heavy: each parser imports what checks its value when it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runvil._settings import (
    Needed,
    Setting,
    as_bool,
    as_names,
    as_str,
    choice,
    positive_number,
    whole_number,
)
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
    "COMMANDS",
    "SEARCH_PROVIDERS",
    "SEARCH_SETTINGS",
    "SETTINGS",
    "check_env_proxies",
    "policy_fields",
    "search_settings",
    "shown_proxy",
]

#: The commands that fetch (``runvil search`` does not), and ``runvil config``.
COMMANDS = ("fetch", "run", "mcp", "config")


def _private_hosts(value: Any, where: str) -> tuple[str, ...]:
    from runvil._net.hostnames import PrivateHosts

    return PrivateHosts.parse(as_names(value, where), setting=where).entries


def _domains(value: Any, where: str) -> tuple[str, ...]:
    from runvil.web._fetch.policy import domain_entry

    return tuple(domain_entry(entry, where) for entry in as_names(value, where))


def _user_agent(value: Any, where: str) -> str:
    from runvil.web._fetch.policy import user_agent_value

    return user_agent_value(as_str(value, where), where)


def _proxy(value: Any, where: str) -> str | None:
    from runvil._net.proxy import proxy_setting

    try:
        return proxy_setting(value)
    except ValueError as err:  # never quotes the value: it may hold a password
        raise ValueError(f"{where}: {err}") from None


def _ca_bundle(value: Any, where: str) -> str:
    """The path of a readable PEM file of CA certificates (read now, so a bad one stops the
    command before anything runs)."""
    from runvil.web._fetch.policy import FetchPolicy

    try:
        path = FetchPolicy(ca_bundle=value).ca_bundle  # the policy reads and checks the file
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    assert path is not None
    return path


def shown_proxy(value: str | None) -> str:
    """A proxy setting as ``runvil config`` shows it: credentials masked, ``none`` for direct."""
    from runvil._net.proxy import masked

    return masked(value) or "none"


#: The search providers a configuration can name (``none`` offers no search at all).
SEARCH_PROVIDERS: tuple[str, ...] = (
    "duckduckgo", *(name for name in PROVIDER_NAMES if name != "duckduckgo"), "none",
)


def _api_key_env(value: Any, where: str) -> str | None:
    """``search.api_key_env``: the variable the key is read from first; anything but a
    non-empty string is no name."""
    return value if isinstance(value, str) and value else None


def _api_key_needed(values: Mapping[str, Any]) -> Needed | None:
    """A keyed provider reads its key from the variable ``search.api_key_env`` names, else its
    own (``BRAVE_API_KEY``); the others read none."""
    provider = values["search.provider"]
    if provider not in KEY_ENV:
        return None
    named = values.get("search.api_key_env")
    env = (*((named,) if named else ()), KEY_ENV[provider])
    return Needed(env, f"search provider {provider} needs an API key: set {env[0]}")


def _url_needed(values: Mapping[str, Any]) -> Needed | None:
    """SearXNG and the gateway read their URL (``SEARXNG_URL``...); the others read none."""
    provider = values["search.provider"]
    if provider not in URL_ENV:
        return None
    return Needed(
        (URL_ENV[provider],),
        f"search provider {provider} needs a URL: set search.url in runvil.toml "
        f"or {URL_ENV[provider]}",
    )


def _always_read(values: Mapping[str, Any]) -> Needed:
    """``search.allow_private`` is read (and checked) whatever the provider; it is shown only
    when something sets it."""
    return Needed((PRIVATE_ENV,))


def _masked(value: str | None) -> str | None:
    """A key as ``runvil config`` shows it: whether it is set, never any of its characters."""
    return None if value is None else "********"


#: The search provider and what it needs, resolved before every other setting, in this order
#: (each one's ``needs`` reads those before it). Values: :func:`search_settings`.
SEARCH_SETTINGS: tuple[Setting, ...] = (
    Setting(
        "search.provider", (CHOICE_ENV,), choice(SEARCH_PROVIDERS), "duckduckgo",
        flag="search_provider", implied_by=tuple((var, name) for name, var in DETECTION_ORDER),
    ),
    Setting("search.api_key_env", (), _api_key_env, None, listed=False),
    Setting(
        "search.api_key", tuple(dict.fromkeys(KEY_ENV.values())), as_str, None,
        flag="search_api_key", needs=_api_key_needed, show=_masked,
    ),
    Setting(
        "search.url", tuple(dict.fromkeys(URL_ENV.values())), as_str, None,
        flag="search_url", needs=_url_needed,
    ),
    Setting(
        "search.allow_private", (PRIVATE_ENV,), as_bool, False,
        flag="search_allow_private", needs=_always_read, show=lambda value: value or None,
    ),
)


def search_settings(values: Mapping[str, Any]) -> SearchSettings:
    """The :class:`SearchSettings` the resolved values (by key) of :data:`SEARCH_SETTINGS`
    describe."""
    return SearchSettings(
        values["search.provider"],
        api_key=values.get("search.api_key"),
        url=values.get("search.url"),
        allow_private=bool(values.get("search.allow_private")),
    )


#: The web Pack's settings, in the order they are resolved (so the first bad one is reported).
#: A ``fetch.*`` setting with a default other than ``None`` gives that default to the
#: model-facing faces (``runvil fetch``, ``runvil mcp``) when it is not set; ``runvil run``
#: keeps the specified policy for prompt files unless the setting is given.
SETTINGS: tuple[Setting, ...] = (
    # -- the operator's network and tools (docs/company-network.md) --------------------------
    Setting(
        "fetch.user_agent", ("RUNVIL_FETCH_USER_AGENT",), _user_agent, None,
        flag="user_agent", option="--user-agent", metavar="TEXT",
        help="The User-Agent header every fetch sends (default: harness-webfetch/0.0).",
        commands=COMMANDS,
    ),
    Setting(
        "fetch.private_hosts", ("RUNVIL_FETCH_PRIVATE_HOSTS",), _private_hosts, None,
        flag="private_hosts", option="--private-host", metavar="HOST", multiple=True,
        commands=COMMANDS,
        help="A host of your own network to fetch (repeatable; replaces fetch.private_hosts).",
    ),
    Setting(
        "fetch.allowed_domains", ("RUNVIL_FETCH_ALLOWED_DOMAINS",), _domains, None,
        flag="allowed_domains", option="--allow-domain", metavar="DOMAIN", multiple=True,
        commands=COMMANDS, help="Fetch only this domain and those named so (repeatable).",
    ),
    Setting(
        "fetch.blocked_domains", ("RUNVIL_FETCH_BLOCKED_DOMAINS",), _domains, None,
        flag="blocked_domains", option="--block-domain", metavar="DOMAIN", multiple=True,
        commands=COMMANDS, help="Never fetch this domain (repeatable).",
    ),
    Setting("fetch.proxy", ("RUNVIL_FETCH_PROXY",), _proxy, None, show=shown_proxy),
    Setting("search.proxy", ("RUNVIL_SEARCH_PROXY",), _proxy, None, show=shown_proxy),
    Setting("search.rate", ("RUNVIL_SEARCH_RATE",), positive_number("searches per second")),
    Setting(
        "fetch.ca_bundle", ("RUNVIL_FETCH_CA_BUNDLE",), _ca_bundle, None,
        flag="ca_bundle", option="--ca-bundle", metavar="FILE",
        help="A PEM file of your organisation's CA certificates, trusted besides the public "
        "roots.",
    ),
    # -- reading more (docs/fetch.md, "Reading more")
    Setting("fetch.continuation", ("RUNVIL_FETCH_CONTINUATION",), as_bool, True,
            flag="fetch_continuation", option="--continuation/--no-continuation",
            help="Offer start_index to read long pages on (default: on; runvil run: off)."),
    Setting("fetch.pdf", ("RUNVIL_FETCH_PDF",), as_bool, True,
            flag="fetch_pdf", option="--pdf/--no-pdf",
            help="Return PDFs as text (default: on; runvil run: off)."),
    Setting("fetch.pdf_max_pages", ("RUNVIL_FETCH_PDF_MAX_PAGES",), whole_number("pages")),
    Setting("fetch.robots", ("RUNVIL_FETCH_ROBOTS",), as_bool, False,
            flag="fetch_robots", option="--robots/--no-robots",
            help="Honour each site's robots.txt (default: off)."),
    # -- pages that JavaScript builds (docs/fetch.md). No default here: runvil fetch and runvil
    # mcp turn "auto" on when a usable browser is found, runvil run keeps "never".
    Setting("fetch.browser", ("RUNVIL_FETCH_BROWSER",), choice(("never", "auto", "always")),
            None, flag="fetch_browser", option="--browser", metavar="never|auto|always",
            commands=COMMANDS,
            help="Render pages that JavaScript builds in a headless browser with no network of "
            "its own (default: auto when one is found; runvil run: never)."),
    Setting("fetch.browser_path", ("RUNVIL_FETCH_BROWSER_PATH",), as_str, None),
)


def policy_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`~runvil.web.FetchPolicy` fields among settings ``values`` (by key): each
    ``fetch.NAME`` sets the field ``NAME``."""
    return {key[len("fetch."):]: value for key, value in values.items() if key.startswith("fetch.")}


def check_env_proxies(values: Mapping[str, Any], env: Mapping[str, str]) -> None:
    """A proxy setting of ``"env"`` reads ``HTTPS_PROXY`` and friends: check them now, so a bad
    one stops the command before anything runs (naming the variable, never its value)."""
    if "env" not in (values.get("fetch.proxy"), values.get("search.proxy")):
        return
    from runvil._net.proxy import env_proxies

    try:
        env_proxies(env)
    except ValueError as err:
        raise ValueError(f"{err} (read because a proxy setting is \"env\")") from None
