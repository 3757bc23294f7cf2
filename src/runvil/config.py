"""runvil's configuration: one effective setting per key, from a flag, ``runvil.toml`` or the
environment, in that order of precedence.

Why this order: a flag is what the user typed for this one run, the file is what they wrote down
for this project (or for their account), and the environment is ambient — often inherited from a
shell profile they no longer think about. The most deliberate source wins. Each setting is
resolved on its own, so a file that names ``provider = "brave"`` still takes the Brave key from
``BRAVE_API_KEY`` when the file holds no key.

The file is the first of ``./runvil.toml`` and ``$XDG_CONFIG_HOME/runvil/runvil.toml`` (default
``~/.config/runvil/runvil.toml``) that exists; files are not merged, so what you read in the file
that was found is the whole file layer. ``--config PATH`` or ``RUNVIL_CONFIG`` names one exactly.
The reference is ``docs/configuration.md``.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "APPROVAL_MODES",
    "SEARCH_PROVIDERS",
    "Config",
    "ConfigError",
    "ModelProvider",
    "SearchSettings",
    "find_config_file",
    "load_config",
    "masked",
]

#: The search providers a configuration can name (``none`` offers no search at all).
SEARCH_PROVIDERS = ("duckduckgo", "brave", "tavily", "searxng", "gateway", "none")
#: How network tool calls are approved: all at once, by asking at the terminal, or never.
APPROVAL_MODES = ("auto", "ask", "deny")

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class ConfigError(Exception):
    """The configuration cannot be used; the message says which setting and where it came from."""


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
class SearchSettings:
    """The search provider the host supplies, with what that provider needs."""

    provider: str
    api_key: str | None = None
    url: str | None = None
    allow_private: bool = False


@dataclass(frozen=True)
class Config:
    """The effective configuration. ``sources`` says where each setting came from
    (``flag``, ``file:PATH``, ``env:VAR`` or ``default``), which ``runvil config`` prints."""

    search: SearchSettings
    envelope: bool = True
    approval: str = "auto"
    web: bool = True
    models: Mapping[str, str] = field(default_factory=dict)
    providers: Mapping[str, ModelProvider] = field(default_factory=dict)
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


def masked(secret: str | None) -> str | None:
    """A secret as ``runvil config`` shows it: whether it is set, never any of its characters."""
    return None if secret is None else "********"


def find_config_file(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Path | None:
    """The file layer: ``RUNVIL_CONFIG``, else ``./runvil.toml``, else the user config dir."""
    env = os.environ if env is None else env
    named = env.get("RUNVIL_CONFIG")
    if named:
        return Path(named)
    here = (cwd or Path.cwd()) / "runvil.toml"
    if here.is_file():
        return here
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


class _Layers:
    """Looks one setting up in flag, file and env order and records where it was found."""

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

    def get(self, key: str, dotted: str, env_vars: tuple[str, ...]) -> tuple[Any, str] | None:
        """``(value, source)`` of the first layer that sets ``key``, or None."""
        if self.flags.get(key) is not None:
            return self.flags[key], "flag"
        value = self.file_value(dotted)
        if value is not None:
            return value, f"file:{self.path}"
        for var in env_vars:
            if self.env.get(var, "").strip():
                return self.env[var].strip(), f"env:{var}"
        return None

    def where(self, source: str, dotted: str) -> str:
        if source.startswith("file:"):
            return f"{self.path}: {dotted}"
        if source.startswith("env:"):
            return source[4:]
        return f"--{dotted.replace('_', '-')}"


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


def _as_str(value: Any, where: str) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ConfigError(f"{where} must be a non-empty string, not {value!r}")


def _check_model_spec(spec: Any, where: str) -> str:
    text = _as_str(spec, where)
    provider, sep, model = text.partition(":")
    if not sep or not provider.strip() or not model.strip():
        raise ConfigError(f"{where} must read PROVIDER:MODEL, not {text!r}")
    return f"{provider.strip()}:{model.strip()}"


#: Which env vars pick a search provider when nothing names one, in this order (the same order
#: as ``runvil.web.search.provider_from_env``).
_SEARCH_ENV_ORDER: tuple[tuple[str, str], ...] = (
    ("brave", "BRAVE_API_KEY"),
    ("tavily", "TAVILY_API_KEY"),
    ("searxng", "SEARXNG_URL"),
    ("gateway", "RUNVIL_SEARCH_GATEWAY_URL"),
    ("gateway", "RUNVIL_SEARCH_GATEWAY_KEY"),
)
_SEARCH_KEY_ENV = {
    "brave": ("BRAVE_API_KEY",),
    "tavily": ("TAVILY_API_KEY",),
    "gateway": ("RUNVIL_SEARCH_GATEWAY_KEY",),
}
_SEARCH_URL_ENV = {"searxng": ("SEARXNG_URL",), "gateway": ("RUNVIL_SEARCH_GATEWAY_URL",)}


def _search(layers: _Layers) -> SearchSettings:
    got = layers.get("search_provider", "search.provider", ("RUNVIL_SEARCH_PROVIDER",))
    if got is None:
        provider, source = "duckduckgo", "default"
        for name, var in _SEARCH_ENV_ORDER:
            if layers.env.get(var, "").strip():
                provider, source = name, f"env:{var}"
                break
    else:
        provider = _as_choice(
            got[0], SEARCH_PROVIDERS, layers.where(got[1], "search.provider")
        )
        source = got[1]
    layers.sources["search.provider"] = source

    api_key: str | None = None
    if provider in _SEARCH_KEY_ENV:
        key_env = layers.file_value("search.api_key_env")
        env_vars = (key_env,) if isinstance(key_env, str) and key_env else ()
        got = layers.get("search_api_key", "search.api_key", env_vars + _SEARCH_KEY_ENV[provider])
        if got is None:
            need = (env_vars + _SEARCH_KEY_ENV[provider])[0]
            raise ConfigError(f"search provider {provider} needs an API key: set {need}")
        api_key = _as_str(got[0], layers.where(got[1], "search.api_key"))
        layers.sources["search.api_key"] = got[1]

    url: str | None = None
    if provider in _SEARCH_URL_ENV:
        got = layers.get("search_url", "search.url", _SEARCH_URL_ENV[provider])
        if got is None:
            raise ConfigError(
                f"search provider {provider} needs a URL: set search.url in runvil.toml "
                f"or {_SEARCH_URL_ENV[provider][0]}"
            )
        url = _as_str(got[0], layers.where(got[1], "search.url"))
        layers.sources["search.url"] = got[1]

    allow_private = False
    got = layers.get(
        "search_allow_private", "search.allow_private", ("RUNVIL_SEARXNG_ALLOW_PRIVATE",)
    )
    if got is not None:
        allow_private = _as_bool(got[0], layers.where(got[1], "search.allow_private"))
        layers.sources["search.allow_private"] = got[1]
    return SearchSettings(provider, api_key=api_key, url=url, allow_private=allow_private)


def _providers(layers: _Layers) -> dict[str, ModelProvider]:
    table = layers.file_value("providers")
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise ConfigError(f"{layers.path}: providers must be a table of [providers.NAME] tables")
    out: dict[str, ModelProvider] = {}
    for name, entry in table.items():
        where = f"{layers.path}: providers.{name}"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where} must be a table")
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


def _models(layers: _Layers, flag_models: Mapping[str, str]) -> dict[str, str]:
    roles: dict[str, str] = {}
    for var, value in layers.env.items():
        if var.startswith("RUNVIL_MODEL_") and value and len(var) > len("RUNVIL_MODEL_"):
            role = var[len("RUNVIL_MODEL_"):].lower()
            roles[role] = _check_model_spec(value, var)
            layers.sources[f"models.{role}"] = f"env:{var}"
    table = layers.file_value("models")
    if table is not None:
        if not isinstance(table, Mapping):
            raise ConfigError(f"{layers.path}: models must be a table of ROLE = \"PROVIDER:MODEL\"")
        for role, spec in table.items():
            roles[str(role)] = _check_model_spec(spec, f"{layers.path}: models.{role}")
            layers.sources[f"models.{role}"] = f"file:{layers.path}"
    for role, spec in flag_models.items():
        roles[role] = _check_model_spec(spec, f"--model {role}")
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
    ``search_api_key``, ``search_url``, ``search_allow_private``, ``envelope``, ``approval``,
    ``web`` and ``models`` (role -> ``PROVIDER:MODEL``). Raises :class:`ConfigError` with a
    message naming the setting and its source.
    """
    env = os.environ if env is None else env
    flags = dict(flags or {})
    path = config_path if config_path is not None else find_config_file(cwd, env)
    data = _read_file(path) if path is not None else {}
    layers = _Layers(flags, data, path, env)

    search = _search(layers)

    def setting(key: str, dotted: str, env_var: str, default: Any, convert: Any) -> Any:
        got = layers.get(key, dotted, (env_var,))
        if got is None:
            layers.sources[dotted] = "default"
            return default
        layers.sources[dotted] = got[1]
        return convert(got[0], layers.where(got[1], dotted))

    envelope = setting("envelope", "envelope", "RUNVIL_ENVELOPE", True, _as_bool)
    approval = setting(
        "approval", "approval", "RUNVIL_APPROVAL", "auto",
        lambda v, w: _as_choice(v, APPROVAL_MODES, w),
    )
    web = setting("web", "web", "RUNVIL_WEB", True, _as_bool)
    providers = _providers(layers)
    models = _models(layers, flags.get("models") or {})
    config = Config(
        search=search, envelope=envelope, approval=approval, web=web, models=models,
        providers=providers, file=path, sources=dict(layers.sources),
    )
    for role, spec in models.items():
        try:
            config.model_provider(spec.partition(":")[0])
        except ConfigError as err:
            raise ConfigError(f"models.{role}: {err}") from None
    return config
