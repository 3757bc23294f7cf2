"""Reading more through the faces: ``runvil fetch`` and ``runvil mcp`` read on and read PDFs
unless configured off, ``runvil run`` keeps the seeds' Pack for prompt files unless told, and
every setting is a ``[fetch]`` key, a ``RUNVIL_FETCH_*`` variable and a flag."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from aiohttp import web
from mcp import Client

from runvil._faces.config import ConfigError, load_config
from runvil._faces.mcp import (
    CONTINUATION_INSTRUCTIONS,
    WebToolServer,
    fetch_policy_paragraph,
    instructions,
)
from runvil._faces.wiring import MCP_FORMS, wire
from runvil.web import FetchPolicy
from runvil.web._fetch.browser.discovery import find_browser
from runvil.web._search.provider import SearchRequest, SearchResult
from tests.faces_helpers import child_env, run_cli, user_config, write_seam
from tests.fixtures.internet import FakeInternet
from tests.fixtures.pdfs import text_pdf

#: The faces render app shells when a browser that can run with its sandbox is found.
FACES_BROWSER = "auto" if find_browser().usable else "never"

LONG = "".join(f"{i:06d}\n" for i in range(10_000))  # 70,000 characters
PDF = text_pdf(["First page.", "Second page."])
PDF_TEXT = "## Page 1\n\nFirst page.\n\n## Page 2\n\nSecond page."


class Provider:
    name = "scripted"
    endpoints: Sequence[str] = ()

    async def search(self, request: SearchRequest) -> Sequence[SearchResult]:
        return [SearchResult(title="T", url="https://e.com", description="D")]


@pytest.fixture
async def reading_site(internet: FakeInternet) -> list[str]:
    """example.com with a long text, a PDF and a robots.txt that keeps /private out."""
    seen: list[str] = []

    async def long(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(text=LONG, content_type="text/plain")

    async def pdf(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(body=PDF, content_type="application/pdf")

    async def robots(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(text="User-agent: *\nDisallow: /private\n", content_type="text/plain")

    async def private(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(text="secret", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/long.txt", long)
    app.router.add_get("/report.pdf", pdf)
    app.router.add_get("/robots.txt", robots)
    app.router.add_get("/private", private)
    await internet.serve(app)
    return seen


@pytest.fixture
def env(internet: FakeInternet, reading_site: list[str], tmp_path: Path) -> dict[str, str]:
    return child_env(write_seam(internet, tmp_path), tmp_path)


# -- the configuration -----------------------------------------------------------------------


def test_the_faces_read_on_and_read_pdfs_and_prompt_files_keep_the_seeds(tmp_path: Path) -> None:
    cfg = load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert cfg.fetch == {}
    assert cfg.fetch_defaults == {"continuation": True, "pdf": True, "robots": False}
    wiring = wire(cfg)
    assert wiring.policy == FetchPolicy()
    assert wiring.face_policy == FetchPolicy(continuation=True, pdf=True, browser=FACES_BROWSER)
    assert wiring.web_pack(("fetch",)).policy == wiring.face_policy
    faces = wiring.host(MCP_FORMS)
    prompts = wiring.host(installed=True, prompts=True)
    assert "start_index" in faces.tools["web/fetch"].schema_dict()["properties"]
    assert "start_index" not in prompts.tools["web/fetch"].schema_dict()["properties"]


def test_each_setting_from_the_file_the_environment_and_a_flag(tmp_path: Path) -> None:
    (user_config(tmp_path)).write_text(
        "[fetch]\ncontinuation = false\npdf_max_pages = 12\nrobots = true\n"
    )
    env = {"HOME": str(tmp_path), "RUNVIL_FETCH_PDF": "off", "RUNVIL_FETCH_ROBOTS": "no"}
    cfg = load_config({"fetch_pdf": True}, env=env, cwd=tmp_path)
    path = user_config(tmp_path)
    assert cfg.fetch == {"continuation": False, "pdf": True, "pdf_max_pages": 12, "robots": False}
    assert [
        cfg.sources[f"fetch.{k}"] for k in ("continuation", "pdf", "pdf_max_pages", "robots")
    ] == [f"file:{path}", "flag", f"file:{path}", "env:RUNVIL_FETCH_ROBOTS"]
    wiring = wire(cfg)
    expected = FetchPolicy(continuation=False, pdf=True, pdf_max_pages=12, robots=False)
    assert wiring.policy == expected  # set settings reach prompt files too
    assert wiring.face_policy == dataclasses.replace(expected, browser=FACES_BROWSER)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[fetch]\npdf = 3\n", "{path}: fetch.pdf must be true or false, not 3"),
        ("[fetch]\npdf_max_pages = 0\n",
         "{path}: fetch.pdf_max_pages must be a whole number of pages, 1 or more, not 0"),
        ("[fetch]\npdf_max_pages = true\n",
         "{path}: fetch.pdf_max_pages must be a whole number of pages, 1 or more, not True"),
        ("[fetch]\nrobot = true\n", "{path}: unknown key fetch.robot; did you mean fetch.robots?"),
    ],
)
def test_bad_values_are_configuration_errors(tmp_path: Path, text: str, message: str) -> None:
    path = user_config(tmp_path)
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    assert str(info.value) == message.format(path=path)


def test_a_policy_an_embedding_program_chose_is_kept(tmp_path: Path) -> None:
    cfg = load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    wiring = wire(cfg, policy=FetchPolicy(pdf=True, continuation=False, timeout=3.0))
    assert wiring.face_policy == FetchPolicy(
        pdf=True, continuation=True, timeout=3.0, browser=FACES_BROWSER
    )
    assert wire(cfg, policy=FetchPolicy(robots=True)).face_policy.robots


# -- MCP -------------------------------------------------------------------------------------


async def test_mcp_offers_start_index_says_how_and_keeps_the_page_for_the_session(
    internet: FakeInternet, reading_site: list[str], tmp_path: Path
) -> None:
    cfg = load_config(env={"HOME": str(tmp_path)}, cwd=tmp_path)
    host = wire(cfg, network=internet.network(), provider=Provider()).host(MCP_FORMS)
    async with host:
        server = WebToolServer(host)
        async with Client(server.server) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert client.instructions == "\n\n".join(
                [
                    instructions(True),
                    fetch_policy_paragraph(FetchPolicy()),
                    CONTINUATION_INSTRUCTIONS,
                ]
            )
            url = "https://example.com/long.txt"
            first = await client.call_tool("web_fetch", {"url": url})
            second = await client.call_tool("web_fetch", {"url": url, "start_index": 40_000})
            report = await client.call_tool("web_fetch", {"url": "https://example.com/report.pdf"})
        await server.aclose()
    schema = listed["web_fetch"].input_schema
    assert list(schema["properties"]) == ["url", "max_chars", "raw", "start_index"]
    assert listed["web_fetch"].description == (
        "Fetch a web page and return its main content as markdown."
    )
    assert "next_start_index: 40000\n" in first.content[0].text
    assert f"\n\n{LONG[40_000:]}\n</untrusted_input_" in second.content[0].text
    assert "truncated: false\nextraction: plain" in second.content[0].text
    assert f"extraction: pdf\n\n{PDF_TEXT}\n</untrusted_input_" in report.content[0].text
    assert reading_site == ["/long.txt", "/report.pdf"]


def test_the_continuation_instructions() -> None:
    assert CONTINUATION_INSTRUCTIONS == (
        "A web_fetch result whose header reads truncated: true and next_start_index: N has more "
        "text: to read on, call web_fetch again with the url from its url: line and start_index "
        "N; the server keeps the page for this session, so the parts fit together exactly."
    )


async def test_mcp_without_continuation_is_the_seeds_tool(
    internet: FakeInternet, tmp_path: Path
) -> None:
    cfg = load_config({"fetch_continuation": False}, env={"HOME": str(tmp_path)}, cwd=tmp_path)
    host = wire(cfg, network=internet.network(), provider=Provider()).host(MCP_FORMS)
    async with host:
        server = WebToolServer(host)
        async with Client(server.server) as client:
            tools = (await client.list_tools()).tools
            assert client.instructions == "\n\n".join(
                [instructions(True), fetch_policy_paragraph(FetchPolicy())]
            )
    assert "start_index" not in tools[0].input_schema["properties"]


# -- the command line ------------------------------------------------------------------------


async def test_runvil_fetch_start_reads_on(env: dict[str, str]) -> None:
    code, out, err = await run_cli(
        "fetch", "https://example.com/long.txt", "--start", "69993", env=env
    )
    assert (code, out, err) == (
        0,
        "url: https://example.com/long.txt\ntruncated: false\nextraction: plain\n\n009999\n\n",
        "",
    )
    code, out, err = await run_cli(
        "fetch", "https://example.com/long.txt", "--start", "-1", env=env
    )
    assert (code, out, err) == (2, "", "web_fetch: start_index must be a non-negative integer\n")


async def test_runvil_fetch_start_needs_continuation(env: dict[str, str]) -> None:
    code, out, err = await run_cli(
        "fetch", "https://example.com/long.txt", "--start", "5", "--no-continuation", env=env
    )
    assert (code, out, err) == (2, "", "runvil: --start needs fetch.continuation, which is off\n")


async def test_runvil_fetch_reads_pdfs_unless_told_not_to(env: dict[str, str]) -> None:
    url = "https://example.com/report.pdf"
    code, out, _ = await run_cli("fetch", url, env=env)
    assert (code, out) == (0, f"url: {url}\ntruncated: false\nextraction: pdf\n\n{PDF_TEXT}\n")
    code, out, _ = await run_cli("fetch", url, "--no-pdf", env=env)
    assert (code, out) == (
        1,
        f"content type application/pdf from {url} cannot be returned as text; try an HTML "
        "version of the page or a different URL\n",
    )
    code, out, _ = await run_cli("fetch", url, env={**env, "RUNVIL_FETCH_PDF": "false"})
    assert code == 1
    code, out, _ = await run_cli("fetch", url, "--json", env=env)
    assert json.loads(out) == {
        "ok": True,
        "text": f"url: {url}\ntruncated: false\nextraction: pdf\n\n{PDF_TEXT}",
        "error_kind": None,
    }


async def test_runvil_fetch_robots(env: dict[str, str], reading_site: list[str]) -> None:
    url = "https://example.com/private"
    assert await run_cli("fetch", url, env=env) == (
        0, f"url: {url}\ntruncated: false\nextraction: plain\n\nsecret\n", ""
    )
    assert await run_cli("fetch", url, "--robots", env=env) == (
        1, f"{url} is disallowed by the site's robots.txt\n", ""
    )
    assert reading_site == ["/private", "/robots.txt"]


async def test_runvil_config_shows_the_reading_settings_with_their_sources(
    env: dict[str, str], tmp_path: Path
) -> None:
    (user_config(tmp_path)).write_text("[fetch]\nrobots = true\npdf_max_pages = 50\n")
    code, out, err = await run_cli(
        "config", "--no-pdf", env={**env, "RUNVIL_FETCH_CONTINUATION": "0"}, cwd=tmp_path
    )
    path = user_config(tmp_path)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    start = lines.index("[fetch]")
    assert lines[start : start + 5] == [
        "[fetch]",
        "continuation = false  # env:RUNVIL_FETCH_CONTINUATION",
        "pdf = false  # flag",
        "pdf_max_pages = 50  # file:" + str(path),
        "robots = true  # file:" + str(path),
    ]


async def test_every_command_takes_the_reading_flags(env: dict[str, str]) -> None:
    for command in ("fetch", "search", "run", "mcp", "config"):
        code, out, _ = await run_cli(command, "--help", env=env)
        assert code == 0
        for flag in ("--continuation / --no-continuation", "--pdf / --no-pdf",
                     "--robots / --no-robots"):
            assert flag in out, (command, flag)
    code, out, _ = await run_cli("fetch", "--help", env=env)
    assert "--start N" in out
