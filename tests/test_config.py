"""Configuration: flag > file > env per setting, file discovery, errors naming the source."""

from __future__ import annotations

from pathlib import Path

import pytest

from runvil._faces.config import ConfigError, find_config_file, load_config, masked


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


def test_file_beats_env_and_flag_beats_file(tmp_path: Path) -> None:
    write(
        tmp_path / "runvil.toml",
        'envelope = false\napproval = "deny"\n[search]\nprovider = "tavily"\n',
    )
    env = {
        "HOME": str(tmp_path),
        "RUNVIL_ENVELOPE": "on",
        "RUNVIL_APPROVAL": "ask",
        "BRAVE_API_KEY": "br",
        "TAVILY_API_KEY": "tv",
    }
    cfg = load_config(env=env, cwd=tmp_path)
    assert cfg.file == tmp_path / "runvil.toml"
    assert (cfg.envelope, cfg.approval) == (False, "deny")
    assert cfg.search.provider == "tavily"
    assert cfg.search.api_key == "tv"  # the file names no key: the provider's env var supplies it
    assert cfg.sources["envelope"] == f"file:{tmp_path / 'runvil.toml'}"
    assert cfg.sources["search.api_key"] == "env:TAVILY_API_KEY"
    cfg = load_config(
        {"envelope": True, "approval": "auto", "search_provider": "brave"}, env=env, cwd=tmp_path
    )
    assert (cfg.envelope, cfg.approval, cfg.search.provider) == (True, "auto", "brave")
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
        tmp_path / "runvil.toml",
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
    assert cfg.models == {
        "writer": "local:llama3",
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
    assert cfg.sources["models.writer"] == f"file:{tmp_path / 'runvil.toml'}"


def test_user_config_dir_is_found_when_cwd_has_none(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "runvil").mkdir(parents=True)
    user = write(home / ".config" / "runvil" / "runvil.toml", "envelope = false\n")
    work = tmp_path / "work"
    work.mkdir()
    assert find_config_file(work, {"HOME": str(home)}) == user
    xdg = tmp_path / "xdg"
    (xdg / "runvil").mkdir(parents=True)
    other = write(xdg / "runvil" / "runvil.toml", "")
    assert find_config_file(work, {"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}) == other
    here = write(work / "runvil.toml", "")
    assert find_config_file(work, {"HOME": str(home)}) == here
    named = write(tmp_path / "named.toml", "")
    assert find_config_file(work, {"HOME": str(home), "RUNVIL_CONFIG": str(named)}) == named


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
    path = write(tmp_path / "runvil.toml", text)
    with pytest.raises(ConfigError) as info:
        load_config(env={"HOME": str(tmp_path), **env}, cwd=tmp_path)
    assert str(info.value) == message.format(path=path)


def test_named_file_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        load_config(config_path=missing, env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert str(info.value) == f"{missing}: no such configuration file"


def test_secret_in_file_needs_api_key_env_or_value(tmp_path: Path) -> None:
    write(tmp_path / "runvil.toml", '[search]\nprovider = "brave"\napi_key_env = "MY_BRAVE"\n')
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
