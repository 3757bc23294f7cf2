"""The browser setting in the faces: runvil.toml, the environment, --browser, runvil config."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from runvil._faces.config import ConfigError, load_config
from runvil._faces.wiring import wire
from runvil.web._fetch.browser.discovery import find_browser
from tests.faces_helpers import child_env, run_cli, user_config, write_seam
from tests.fixtures.internet import FakeInternet
from tests.web.browser.pages import STORY_TEXT, inline_shell


def test_the_setting_comes_from_a_flag_the_environment_or_the_file(tmp_path: Path) -> None:
    path = user_config(tmp_path)
    path.write_text('[fetch]\nbrowser = "always"\nbrowser_path = "/usr/bin/chromium"\n')
    home = {"HOME": str(tmp_path)}
    cfg = load_config(env=home, cwd=tmp_path)
    assert cfg.fetch == {"browser": "always", "browser_path": "/usr/bin/chromium"}
    assert cfg.sources["fetch.browser"] == f"file:{path}"
    env = {**home, "RUNVIL_FETCH_BROWSER": "never"}
    assert load_config(env=env, cwd=tmp_path).fetch["browser"] == "never"
    assert load_config({"fetch_browser": "auto"}, env=env, cwd=tmp_path).fetch["browser"] == "auto"
    path.unlink()
    assert load_config(env=env, cwd=tmp_path).fetch == {"browser": "never"}
    with pytest.raises(ConfigError) as info:
        load_config(env={**env, "RUNVIL_FETCH_BROWSER": "sometimes"}, cwd=tmp_path)
    assert str(info.value) == (
        "RUNVIL_FETCH_BROWSER must be one of never, auto, always, not 'sometimes'"
    )


def test_the_faces_turn_auto_on_when_a_browser_is_found_and_prompt_files_keep_never(
    tmp_path: Path,
) -> None:
    wiring = wire(load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path))
    assert wiring.policy.browser == "never"
    assert wiring.face_policy.browser == ("auto" if find_browser().usable else "never")


def test_a_browser_asked_for_but_missing_stops_the_command(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "RUNVIL_FETCH_BROWSER_PATH": "/no/such/chromium"}
    cfg = load_config({"fetch_browser": "always"}, env=env, cwd=tmp_path)
    with pytest.raises(ConfigError) as info:
        wire(cfg)
    assert str(info.value) == (
        "fetch.browser is always, but fetch.browser_path /no/such/chromium is not an "
        "executable file"
    )
    # Not asked for: the faces simply leave it off.
    quiet = wire(load_config(env=env, cwd=tmp_path))
    assert quiet.face_policy.browser == "never"


async def test_runvil_fetch_renders_an_app_shell_and_runvil_config_says_why(
    internet: FakeInternet, tmp_path: Path
) -> None:
    async def shell(request: web.Request) -> web.Response:
        return web.Response(text=inline_shell(), content_type="text/html")

    app = web.Application()
    app.router.add_get("/", shell)
    await internet.serve(app)
    env = child_env(write_seam(internet, tmp_path), tmp_path)
    code, out, err = await run_cli("fetch", "https://example.com/", env=env)
    assert (code, err) == (0, "")
    assert out == (
        "url: https://example.com/\ntruncated: false\nextraction: readability\n"
        f"rendered: browser\n\n{STORY_TEXT}\n"
    )
    code, out, err = await run_cli("fetch", "https://example.com/", "--browser", "never", env=env)
    assert (code, err) == (0, "") and "rendered:" not in out

    code, out, err = await run_cli("config", env=env)
    status = find_browser()
    assert (code, err) == (0, "")
    assert f" at {status.executable})" in out and "# browser: auto (Chromium " in out
    code, out, err = await run_cli("config", "--browser", "never", env=env)
    assert "# browser: never (fetch.browser is never)" in out
