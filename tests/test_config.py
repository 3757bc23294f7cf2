"""Configuration: flag > env > file per setting, file discovery, errors naming the source."""

from __future__ import annotations

from pathlib import Path

import pytest

from runvil._faces.config import ConfigError, find_config_file, load_config, masked
from tests.faces_helpers import user_config


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_with_nothing_configured(tmp_path: Path) -> None:
    cfg = load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert cfg.search.provider == "duckduckgo"
    assert cfg.search.api_key is None
    assert (cfg.envelope, cfg.approval, cfg.web) == (True, "auto", True)
    assert cfg.models == {}
    assert cfg.file is None
    assert cfg.sources["search.provider"] == "default"
    assert cfg.sources["envelope"] == "default"


def test_env_picks_the_provider_in_the_documented_order(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "TAVILY_API_KEY": "tv-secret", "BRAVE_API_KEY": "br-secret"}
    cfg = load_config(env=env, cwd=tmp_path)
    assert cfg.search.provider == "brave"
    assert cfg.search.api_key == "br-secret"
    assert cfg.sources["search.provider"] == "env:BRAVE_API_KEY"
    assert cfg.sources["search.api_key"] == "env:BRAVE_API_KEY"
    env = {"HOME": str(tmp_path), "SEARXNG_URL": "http://10.0.0.5:8080"}
    cfg = load_config(env=env, cwd=tmp_path)
    assert (cfg.search.provider, cfg.search.url) == ("searxng", "http://10.0.0.5:8080")
    env = {
        "HOME": str(tmp_path),
        "RUNVIL_SEARCH_GATEWAY_URL": "https://gw.example/search",
        "RUNVIL_SEARCH_GATEWAY_KEY": "gw-key",
    }
    cfg = load_config(env=env, cwd=tmp_path)
    assert (cfg.search.provider, cfg.search.url, cfg.search.api_key) == (
        "gateway",
        "https://gw.example/search",
        "gw-key",
    )


def test_env_beats_file_and_flag_beats_env(tmp_path: Path) -> None:
    write(
        user_config(tmp_path),
        'envelope = false\napproval = "deny"\nweb = false\n[search]\nprovider = "tavily"\n',
    )
    env = {
        "HOME": str(tmp_path),
        "RUNVIL_ENVELOPE": "on",
        "RUNVIL_APPROVAL": "ask",
        "BRAVE_API_KEY": "br",
        "TAVILY_API_KEY": "tv",
    }
    cfg = load_config(env=env, cwd=tmp_path)
    assert cfg.file == user_config(tmp_path)
    assert (cfg.envelope, cfg.approval, cfg.web) == (True, "ask", False)
    assert cfg.search.provider == "tavily"  # a key's variable only picks a provider by default
    assert cfg.search.api_key == "tv"  # the file names no key: the provider's env var supplies it
    assert cfg.sources["envelope"] == "env:RUNVIL_ENVELOPE"
    assert cfg.sources["web"] == f"file:{user_config(tmp_path)}"
    assert cfg.sources["search.api_key"] == "env:TAVILY_API_KEY"
    cfg = load_config(
        {"envelope": False, "approval": "auto", "search_provider": "brave"}, env=env, cwd=tmp_path
    )
    assert (cfg.envelope, cfg.approval, cfg.search.provider) == (False, "auto", "brave")
    assert cfg.search.api_key == "br"
    assert cfg.sources["envelope"] == "flag"
    assert cfg.sources["search.provider"] == "flag"


def test_env_only_settings(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "RUNVIL_ENVELOPE": "off",
        "RUNVIL_APPROVAL": "ASK",
        "RUNVIL_WEB": "false",
        "RUNVIL_SEARCH_PROVIDER": "none",
        "RUNVIL_MODEL_WRITER": "openai:gpt-4o-mini",
    }
    cfg = load_config(env=env, cwd=tmp_path)
    assert (cfg.envelope, cfg.approval, cfg.web) == (False, "ask", False)
    assert cfg.search.provider == "none"
    assert cfg.models == {"writer": "openai:gpt-4o-mini"}
    assert cfg.sources["models.writer"] == "env:RUNVIL_MODEL_WRITER"


def test_model_roles_and_providers_from_file_env_and_flags(tmp_path: Path) -> None:
    write(
        user_config(tmp_path),
        '[models]\nwriter = "local:llama3"\nreviewer = "anthropic:claude-x"\n'
        '[providers.local]\napi = "openai"\nbase_url = "http://127.0.0.1:11434/v1"\n'
        'api_key_env = "LOCAL_KEY"\n',
    )
    env = {
        "HOME": str(tmp_path),
        "RUNVIL_MODEL_WRITER": "openai:gpt-x",
        "RUNVIL_MODEL_ANALYST": "openai:o",
    }
    cfg = load_config({"models": {"reviewer": "openai:gpt-y"}}, env=env, cwd=tmp_path)
    assert cfg.models == {  # the variable beats the file, the flag beats both
        "writer": "openai:gpt-x",
        "reviewer": "openai:gpt-y",
        "analyst": "openai:o",
    }
    local = cfg.model_provider("local")
    assert (local.api, local.base_url, local.api_key_env) == (
        "openai",
        "http://127.0.0.1:11434/v1",
        "LOCAL_KEY",
    )
    assert cfg.model_provider("anthropic").api == "anthropic"
    assert cfg.sources["models.reviewer"] == "flag"
    assert cfg.sources["models.writer"] == "env:RUNVIL_MODEL_WRITER"


def test_the_file_is_the_named_one_or_the_user_s_never_the_working_directory_s(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "runvil").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    here = write(work / "runvil.toml", '[fetch]\nprivate_hosts = ["db.corp.example"]\n')
    # A runvil.toml in the working directory (a cloned repository's) is never read unnamed.
    assert find_config_file(work, {"HOME": str(home)}) is None
    cfg = load_config(env={"HOME": str(home)}, cwd=work)
    assert (cfg.file, cfg.fetch) == (None, {})
    user = write(home / ".config" / "runvil" / "runvil.toml", "envelope = false\n")
    assert find_config_file(work, {"HOME": str(home)}) == user
    xdg = tmp_path / "xdg"
    (xdg / "runvil").mkdir(parents=True)
    other = write(xdg / "runvil" / "runvil.toml", "")
    assert find_config_file(work, {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}) == other
    named = write(tmp_path / "named.toml", "")
    assert find_config_file(work, {"HOME": str(home), "RUNVIL_CONFIG": str(named)}) == named
    # Named, it is read: RUNVIL_CONFIG=runvil.toml, relative to the working directory.
    assert find_config_file(work, {"HOME": str(home), "RUNVIL_CONFIG": "runvil.toml"}) == here
    cfg = load_config(env={"HOME": str(home), "RUNVIL_CONFIG": "runvil.toml"}, cwd=work)
    assert cfg.fetch == {"private_hosts": ("db.corp.example",)}


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        (
            'approval = "sometimes"\n',
            {},
            "{path}: approval must be one of auto, ask, deny, not 'sometimes'",
        ),
        ("envelope = 3\n", {}, "{path}: envelope must be true or false, not 3"),
        (
            '[search]\nprovider = "bing"\n',
            {},
            "{path}: search.provider must be one of duckduckgo, brave, tavily, searxng, gateway, "
            "none, not 'bing'",
        ),
        (
            '[search]\nprovider = "brave"\n',
            {},
            "search provider brave needs an API key: set BRAVE_API_KEY",
        ),
        (
            '[search]\nprovider = "searxng"\n',
            {},
            "search provider searxng needs a URL: set search.url in runvil.toml or SEARXNG_URL",
        ),
        (
            '[models]\nwriter = "gpt"\n',
            {},
            "{path}: models.writer must read PROVIDER:MODEL, not 'gpt'",
        ),
        (
            '[models]\nwriter = "nowhere:m"\n',
            {},
            "models.writer: unknown model provider 'nowhere' (known: anthropic, openai)",
        ),
        ("envelope = \n", {}, "{path}: invalid TOML: Invalid value (at line 1, column 12)"),
        ("", {"RUNVIL_ENVELOPE": "maybe"}, "RUNVIL_ENVELOPE must be true or false, not 'maybe'"),
    ],
)
def test_errors_name_the_setting_and_its_source(
    tmp_path: Path, text: str, env: dict[str, str], message: str
) -> None:
    path = write(user_config(tmp_path), text)
    with pytest.raises(ConfigError) as info:
        load_config(env={"HOME": str(tmp_path), **env}, cwd=tmp_path)
    assert str(info.value) == message.format(path=path)


def test_named_file_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        load_config(config_path=missing, env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert str(info.value) == f"{missing}: no such configuration file"


def test_secret_in_file_needs_api_key_env_or_value(tmp_path: Path) -> None:
    write(user_config(tmp_path), '[search]\nprovider = "brave"\napi_key_env = "MY_BRAVE"\n')
    cfg = load_config(
        env={"HOME": str(tmp_path), "MY_BRAVE": "k1", "BRAVE_API_KEY": "k2"}, cwd=tmp_path
    )
    assert cfg.search.api_key == "k1"
    assert cfg.sources["search.api_key"] == "env:MY_BRAVE"


def test_masked_never_shows_characters() -> None:
    assert masked("sk-verysecret-1234") == "********"
    assert masked(None) is None


def test_the_gateway_key_alone_picks_the_gateway_and_asks_for_its_url(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path), "RUNVIL_SEARCH_GATEWAY_KEY": "k", "RUNVIL_SEARCH_GATEWAY_URL": " "
    }
    with pytest.raises(ConfigError) as info:
        load_config(env=env, cwd=tmp_path)
    assert str(info.value) == (
        "search provider gateway needs a URL: set search.url in runvil.toml "
        "or RUNVIL_SEARCH_GATEWAY_URL"
    )


def test_a_provider_that_refuses_its_url_is_a_configuration_error(tmp_path: Path) -> None:
    from runvil._faces.wiring import wire

    cfg = load_config(env={"HOME": str(tmp_path), "SEARXNG_URL": "ftp://search.lan/"}, cwd=tmp_path)
    with pytest.raises(ConfigError) as info:
        wire(cfg).search_provider()
    assert str(info.value) == (
        "search provider searxng: the SearXNG URL must be an https URL "
        "(plain http only for a private endpoint)"
    )


# -- unknown keys and variables ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[search]\nprovder = "brave"\n',
         "{path}: unknown key search.provder; did you mean search.provider?"),
        ('aproval = "deny"\n', "{path}: unknown key aproval; did you mean approval?"),
        ('[serch]\nprovider = "brave"\n', "{path}: unknown key serch; did you mean search?"),
        ('[providers.local]\nbase_ur = "http://127.0.0.1:1/v1"\n',
         "{path}: unknown key providers.local.base_ur; did you mean providers.local.base_url?"),
        ("colour = 1\n",
         "{path}: unknown key colour; known: approval, envelope, fetch, mcp, models, packs, "
         "providers, search, web"),
        ('search = "brave"\n', "{path}: search must be a table"),
        ('models = "openai:gpt"\n', '{path}: models must be a table of ROLE = "PROVIDER:MODEL"'),
        ("[providers]\nlocal = 1\n", "{path}: providers.local must be a table"),
    ],
)
def test_unknown_keys_are_refused_with_a_suggestion(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(user_config(tmp_path), text)
    with pytest.raises(ConfigError) as info:
        load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert str(info.value) == message.format(path=path)


def test_tables_of_the_user_s_own_keys_take_any_key(tmp_path: Path) -> None:
    write(
        user_config(tmp_path),
        '[models]\nanything = "openai:m"\n[packs.notes]\nprefix = "> "\ncolour = "red"\n',
    )
    cfg = load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert cfg.models == {"anything": "openai:m"}
    assert cfg.packs == {"notes": {"prefix": "> ", "colour": "red"}}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RUNVIL_APROVAL": "deny"},
         "unknown environment variable RUNVIL_APROVAL; did you mean RUNVIL_APPROVAL?"),
        ({"RUNVIL_SEARCH_PROVDER": "brave"},
         "unknown environment variable RUNVIL_SEARCH_PROVDER; did you mean "
         "RUNVIL_SEARCH_PROVIDER?"),
        ({"RUNVIL_TEST_NETWORK": "/tmp/network.json"},
         "unknown environment variable RUNVIL_TEST_NETWORK; known: RUNVIL_APPROVAL, "
         "RUNVIL_CONFIG, RUNVIL_DEBUG, RUNVIL_ENVELOPE, RUNVIL_FETCH_ALLOWED_DOMAINS, "
         "RUNVIL_FETCH_BLOCKED_DOMAINS, RUNVIL_FETCH_BROWSER, RUNVIL_FETCH_BROWSER_PATH, "
         "RUNVIL_FETCH_CA_BUNDLE, RUNVIL_FETCH_CONTINUATION, "
         "RUNVIL_FETCH_PDF, RUNVIL_FETCH_PDF_MAX_PAGES, RUNVIL_FETCH_PRIVATE_HOSTS, "
         "RUNVIL_FETCH_PROXY, RUNVIL_FETCH_ROBOTS, RUNVIL_FETCH_USER_AGENT, "
         "RUNVIL_MCP_ALLOWED_HOSTS, "
         "RUNVIL_MCP_MAX_SESSIONS, RUNVIL_MCP_PACKS, RUNVIL_MCP_SESSIONS_PER_PEER, "
         "RUNVIL_MCP_SESSION_IDLE_TIMEOUT, RUNVIL_MCP_STATE, RUNVIL_MCP_TOOLS, "
         "RUNVIL_MODEL_{ROLE}, "
         "RUNVIL_SEARCH_GATEWAY_KEY, RUNVIL_SEARCH_GATEWAY_URL, RUNVIL_SEARCH_PROVIDER, "
         "RUNVIL_SEARCH_PROXY, RUNVIL_SEARCH_RATE, RUNVIL_SEARXNG_ALLOW_PRIVATE, RUNVIL_WEB"),
    ],
)
def test_unknown_runvil_variables_are_refused(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env={"HOME": str(tmp_path), **env}, cwd=tmp_path)
    assert str(info.value) == message


def test_variables_runvil_reads_are_accepted(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path), "RUNVIL_DEBUG": "1", "RUNVIL_MODEL_WRITER": "openai:m",
        "RUNVIL_SEARXNG_ALLOW_PRIVATE": "1", "RUNVIL_UNUSED_BUT_BLANK": " ", "OTHER_TOOL_X": "1",
    }
    cfg = load_config(env=env, cwd=tmp_path)
    assert cfg.models == {"writer": "openai:m"}
    assert cfg.search.allow_private is True


# -- the settings table: one row per setting ----------------------------------------------------


def test_a_policy_setting_is_one_row_and_reaches_the_fetch_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How a ``[fetch]`` key, its variable and its flag are added: one declaration among the
    web Pack's settings. (None ships today; this is the path the first one will take.)"""
    from runvil import Setting
    from runvil._faces.config import describe
    from runvil._faces.wiring import wire
    from runvil.web import _settings as web_settings

    def seconds(value: object, where: str) -> float:
        if isinstance(value, int | float | str) and float(value) > 0:
            return float(value)
        raise ConfigError(f"{where} must be a positive number of seconds, not {value!r}")

    row = Setting("fetch.timeout", ("RUNVIL_FETCH_TIMEOUT",), seconds, None, flag="fetch_timeout")
    monkeypatch.setattr(web_settings, "SETTINGS", (*web_settings.SETTINGS, row))
    write(user_config(tmp_path), "[fetch]\ntimeout = 7\n")
    env = {"HOME": str(tmp_path), "RUNVIL_FETCH_TIMEOUT": "9"}
    cfg = load_config(env=env, cwd=tmp_path)
    assert (dict(cfg.fetch), cfg.sources["fetch.timeout"]) == (
        {"timeout": 9.0}, "env:RUNVIL_FETCH_TIMEOUT",
    )
    env = {"HOME": str(tmp_path)}
    cfg = load_config(env=env, cwd=tmp_path)
    assert (dict(cfg.fetch), cfg.sources["fetch.timeout"]) == (
        {"timeout": 7.0}, f"file:{user_config(tmp_path)}",
    )
    wiring = wire(cfg)
    assert wiring.policy.timeout == 7.0 and wiring.web_pack(("fetch",)).policy.timeout == 7.0
    assert describe(cfg)["fetch"] == {
        "continuation": True, "pdf": True, "robots": False, "timeout": 7.0,  # the faces' defaults
    }
    assert load_config({"fetch_timeout": 3}, env=env, cwd=tmp_path).fetch == {"timeout": 3.0}
    write(user_config(tmp_path), "[fetch]\ntimout = 7\n")
    with pytest.raises(ConfigError) as info:
        load_config(env=env, cwd=tmp_path)
    assert str(info.value).endswith("unknown key fetch.timout; did you mean fetch.timeout?")


def test_without_policy_settings_the_policy_is_the_seeds_default(tmp_path: Path) -> None:
    from runvil._faces.wiring import wire
    from runvil.web import FetchPolicy

    cfg = load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert cfg.fetch == {}
    assert wire(cfg).policy == FetchPolicy()


def test_a_setting_row_with_an_option_adds_the_flag_to_every_command(tmp_path: Path) -> None:
    """The same declaration, with ``option=``, is also the flag of fetch, search, run, mcp and
    config."""
    import json
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from runvil import Setting\n"
        "from runvil.web import _settings as web\n"
        "row = Setting('fetch.timeout', ('RUNVIL_FETCH_TIMEOUT',), lambda v, w: float(v), None,\n"
        "              flag='fetch_timeout', option='--fetch-timeout')\n"
        "web.SETTINGS = (*web.SETTINGS, row)\n"
        "from runvil._faces.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def runvil(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
            cwd=tmp_path, check=True,
        ).stdout

    data = json.loads(runvil("config", "--json", "--fetch-timeout", "3"))
    assert (data["fetch"]["timeout"], data["sources"]["fetch.timeout"]) == (3.0, "flag")
    for command in ("fetch", "search", "run", "mcp", "config"):
        assert "--fetch-timeout VALUE" in runvil(command, "--help")
